-- Removes a host's own limit, so the default applies again. $1 host key. One row updated when it had one.
UPDATE origin_hosts SET max_running = NULL WHERE host = $1 AND max_running IS NOT NULL
