-- Event refetched (a retry after a checksum mismatch): every segment of the retried files that
-- failed their checksum is queued anew from its first byte and its part files are forgotten,
-- unless the digest expected now is the one their bytes have. Guarded by the transfer: done
-- segments of a failed transfer, its rows locked. $1 transfer ids (bigint[]).
WITH again AS (
    SELECT id, generation FROM transfers
    WHERE id = ANY($1::bigint[]) AND error_code = 'checksum-mismatch' AND expected_digest IS DISTINCT FROM computed_digest),
parts AS (DELETE FROM segment_parts p USING segments s, again a WHERE p.segment_id = s.id AND s.transfer_id = a.id)
UPDATE segments s SET state = 'queued', bytes_done = 0, attempts = 0, lease_token = NULL, last_error = 'checksum mismatch'
FROM again a WHERE s.transfer_id = a.id AND s.generation = a.generation
