-- Makes sure origin hosts have their rows. $1 host keys (text[]).
INSERT INTO origin_hosts (host) SELECT DISTINCT unnest($1::text[]) ON CONFLICT DO NOTHING
