-- Mirrors and piece digests (issue 53). A transfer with mirrors lists them in transfer_mirrors,
-- in priority order: idx 0 is the transfer's own url, which the planner probes. Each queued
-- segment names the mirror it will be fetched from (segments.mirror) and carries that mirror's
-- host in segments.host, so a claim counts the slot at the host it will use. A mirror that
-- fails hands its segments on to the next healthy one; one that serves a bad piece, or a
-- different size, is demoted with the reason.
--
-- piece_length, piece_algorithm and piece_hashes are a Metalink's <pieces>: segments align to
-- pieces, and each piece is verified as its last byte arrives.

ALTER TABLE transfers ADD COLUMN mirrored boolean NOT NULL DEFAULT false,
                      ADD COLUMN piece_length bigint CHECK (piece_length > 0),
                      ADD COLUMN piece_algorithm text,
                      ADD COLUMN piece_hashes text[];

ALTER TABLE segments ADD COLUMN mirror integer;

CREATE TABLE transfer_mirrors (
    transfer_id bigint NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
    idx integer NOT NULL,
    url text NOT NULL,
    host text NOT NULL,
    bytes bigint NOT NULL DEFAULT 0,
    failures integer NOT NULL DEFAULT 0,
    state text NOT NULL DEFAULT 'healthy' CHECK (state IN ('healthy', 'demoted')),
    reason text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (transfer_id, idx)
);

-- Spreads the queued segments of a transfer's generation over its healthy mirrors, segment i
-- to the (i mod n)-th: called once its segments exist.
CREATE FUNCTION haul_spread_mirrors(transfer bigint, gen integer) RETURNS void LANGUAGE sql AS $$
    INSERT INTO origin_hosts (host) SELECT DISTINCT host FROM transfer_mirrors WHERE transfer_id = transfer ON CONFLICT DO NOTHING;
    UPDATE segments s SET mirror = m.idx, host = m.host
    FROM (SELECT idx, host, row_number() OVER (ORDER BY idx) - 1 AS k, count(*) OVER () AS n
          FROM transfer_mirrors WHERE transfer_id = transfer AND state = 'healthy') m
    WHERE s.transfer_id = transfer AND s.generation = gen AND s.state = 'queued' AND m.k = s.idx % m.n;
$$;

-- A segment's attempt on mirror `failed` went wrong: count it on the mirror (demoting it with
-- `reason` when `demote`, or at its third failure, and spreading its other queued segments over
-- the healthy mirrors), add the bytes it brought, and hand the segment, queued again, to the
-- next healthy mirror, its progress cut back to `keep` bytes (the start of a bad piece); returns
-- whether this failure demoted the mirror. Called
-- right after the failure was filed (lease token cleared), while the segment waits out its
-- backoff, so no other worker holds it yet.
CREATE FUNCTION haul_mirror_failed(segment bigint, transfer bigint, failed integer, demote boolean, reason text, received bigint, keep bigint)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    next record;
    was text;
    now_state text;
BEGIN
    SELECT m.state INTO was FROM transfer_mirrors m WHERE m.transfer_id = transfer AND m.idx = failed FOR UPDATE;
    UPDATE transfer_mirrors m SET failures = m.failures + 1, bytes = m.bytes + received, updated_at = now(),
           state = CASE WHEN demote OR m.failures >= 2 THEN 'demoted' ELSE m.state END,
           reason = CASE WHEN demote OR m.failures >= 2 THEN haul_mirror_failed.reason ELSE m.reason END
    WHERE m.transfer_id = transfer AND m.idx = failed
    RETURNING m.state INTO now_state;
    -- A demoted mirror's other queued segments go to the healthy ones at once, not one failure at a time.
    IF was = 'healthy' AND now_state = 'demoted' THEN
        UPDATE segments s SET mirror = m.idx, host = m.host
        FROM (SELECT idx, host, row_number() OVER (ORDER BY idx) - 1 AS k, count(*) OVER () AS n
              FROM transfer_mirrors WHERE transfer_id = transfer AND state = 'healthy') m
        WHERE s.transfer_id = transfer AND s.state = 'queued' AND coalesce(s.mirror, 0) = failed AND s.id <> segment
          AND s.generation = (SELECT generation FROM transfers WHERE id = transfer) AND m.k = s.idx % m.n;
    END IF;
    SELECT idx, host INTO next FROM transfer_mirrors
    WHERE transfer_id = transfer AND state = 'healthy' AND idx <> failed
    ORDER BY idx > failed DESC, failures, idx LIMIT 1;
    UPDATE segments s SET bytes_done = least(s.bytes_done, keep),
           mirror = coalesce(next.idx, s.mirror), host = coalesce(next.host, s.host)
    WHERE s.id = segment AND s.state = 'queued' AND s.lease_token IS NULL;
    RETURN coalesce(was = 'healthy' AND now_state = 'demoted', false);
END $$;
