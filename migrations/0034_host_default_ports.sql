-- A host is named without port 80 or 443 (OriginURL.hostKey): `https://a.example:443/x` and
-- `https://a.example/y` had two names, two slot counters and two limits for one origin. The
-- rows named the old way are renamed. The slot triggers (0010, 0031) fire on a change of
-- `host` or `probe_host` and move each held slot from the old name's counter to the new one's,
-- so the counters stay exact with workers running; a limit set on the old name carries over
-- where the new name has none of its own.
INSERT INTO origin_hosts (host)
SELECT DISTINCT regexp_replace(host, ':(80|443)$', '') FROM origin_hosts WHERE host ~ ':(80|443)$'
ON CONFLICT DO NOTHING;

UPDATE origin_hosts n SET max_running = o.max_running, resume_limit = o.resume_limit
FROM origin_hosts o
WHERE o.host ~ ':(80|443)$' AND n.host = regexp_replace(o.host, ':(80|443)$', '')
  AND n.max_running IS NULL AND o.max_running IS NOT NULL;

UPDATE transfers SET host = regexp_replace(host, ':(80|443)$', '') WHERE host ~ ':(80|443)$';
UPDATE transfers SET probe_host = regexp_replace(probe_host, ':(80|443)$', '') WHERE probe_host ~ ':(80|443)$';
UPDATE segments SET host = regexp_replace(host, ':(80|443)$', '') WHERE host ~ ':(80|443)$';
UPDATE transfer_mirrors SET host = regexp_replace(host, ':(80|443)$', '') WHERE host ~ ':(80|443)$';

INSERT INTO host_throughput AS h (host, minute, bytes)
SELECT regexp_replace(host, ':(80|443)$', ''), minute, sum(bytes) FROM host_throughput WHERE host ~ ':(80|443)$' GROUP BY 1, 2
ON CONFLICT (host, minute) DO UPDATE SET bytes = h.bytes + excluded.bytes;
DELETE FROM host_throughput WHERE host ~ ':(80|443)$';

-- Their slots moved with their rows above: the old names count none.
DELETE FROM origin_hosts WHERE host ~ ':(80|443)$' AND busy = 0;
