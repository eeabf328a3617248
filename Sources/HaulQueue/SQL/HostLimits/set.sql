-- Sets a host's limit ('*': the default for hosts without one); 0 pauses it, remembering the
-- limit it had (its own, or none) for resume. $1 host key, $2 limit.
INSERT INTO origin_hosts (host, max_running) VALUES ($1, $2) ON CONFLICT (host) DO UPDATE SET
  resume_limit = CASE WHEN excluded.max_running <> 0 THEN NULL
                      WHEN origin_hosts.max_running = 0 THEN origin_hosts.resume_limit
                      ELSE origin_hosts.max_running END,
  max_running = excluded.max_running
