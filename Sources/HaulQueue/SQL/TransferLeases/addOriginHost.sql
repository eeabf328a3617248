-- Makes sure an origin host has its row (its slot counter and limit). $1 host.
INSERT INTO origin_hosts (host) VALUES ($1) ON CONFLICT DO NOTHING
