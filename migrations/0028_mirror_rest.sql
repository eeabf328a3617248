-- Mirrors that rest and come back (issue 53). A mirror that refuses, fails or crawls is taken
-- out of the rotation for a while, not for good: it *rests* until retry_after, then goes on
-- *trial* with one queued segment; served, it is healthy again, failed, it rests twice as long
-- (HaulCore's Backoff: rest_base × 2^(rests-1), capped, spread by jitter over 50-100 %). Only a
-- bad piece or another size, proof that the mirror serves other bytes, still demotes it for good.
--
-- streak counts its failures since it last served (three in a row rest it); rests counts its
-- rests since it last served; rate is the bytes per second of its last attempt that served,
-- against which the other mirrors' attempts are judged (a crawl counts as a failure).

ALTER TABLE transfer_mirrors ADD COLUMN retry_after timestamptz,
                             ADD COLUMN rests integer NOT NULL DEFAULT 0,
                             ADD COLUMN streak integer NOT NULL DEFAULT 0,
                             ADD COLUMN rate bigint;

ALTER TABLE transfer_mirrors DROP CONSTRAINT transfer_mirrors_state_check;
ALTER TABLE transfer_mirrors ADD CONSTRAINT transfer_mirrors_state_check CHECK (state IN ('healthy', 'trial', 'resting', 'demoted'));

-- Spreads the queued segments of `transfer`'s current generation held by mirror `mirror` (when
-- NULL: all but those of mirrors on trial) over its healthy mirrors, segment i to the
-- (i mod n)-th; segment `spared` keeps its own.
CREATE FUNCTION haul_respread_mirrors(transfer bigint, mirror integer, spared bigint) RETURNS void LANGUAGE sql AS $$
    UPDATE segments s SET mirror = m.idx, host = m.host
    FROM (SELECT idx, host, row_number() OVER (ORDER BY idx) - 1 AS k, count(*) OVER () AS n
          FROM transfer_mirrors WHERE transfer_id = transfer AND state = 'healthy') m
    WHERE s.transfer_id = transfer AND s.state = 'queued' AND s.id IS DISTINCT FROM spared
      AND (CASE WHEN haul_respread_mirrors.mirror IS NULL
                THEN coalesce(s.mirror, 0) NOT IN (SELECT idx FROM transfer_mirrors WHERE transfer_id = transfer AND state = 'trial')
                ELSE coalesce(s.mirror, 0) = haul_respread_mirrors.mirror END)
      AND s.generation = (SELECT generation FROM transfers WHERE id = transfer) AND m.k = s.idx % m.n;
$$;

DROP FUNCTION haul_mirror_failed(bigint, bigint, integer, boolean, text, bigint, bigint);

-- A segment's attempt on mirror `failed` went wrong: count it on the mirror and add the bytes
-- it brought. `proof` (a bad piece, another size) demotes the mirror for good; an error no
-- retry mends (`rest_now`), a third failure in a row, or a failure on trial rests it for
-- least(rest_cap, rest_base × 2^rests) × (0.5 + 0.5 × jitter) seconds. Either way its other
-- queued segments go to the healthy mirrors at once. The segment itself, queued again, goes to
-- the next healthy mirror, its progress cut back to `keep` bytes (the start of a bad piece); a
-- failure on trial costs it no attempt and no wait. Called right after the failure was filed
-- (lease token cleared), so no other worker holds the segment yet. Returns whether this
-- failure took the mirror out of the rotation.
CREATE FUNCTION haul_mirror_failed(segment bigint, transfer bigint, failed integer, proof boolean, rest_now boolean, reason text,
                                   received bigint, keep bigint, rest_base float8, rest_cap float8, jitter float8)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    next record;
    was record;
    now_state text;
BEGIN
    SELECT m.state, m.streak, m.rests INTO was FROM transfer_mirrors m WHERE m.transfer_id = transfer AND m.idx = failed FOR UPDATE;
    IF NOT FOUND THEN
        -- Pieces without mirrors: only the cut back to the bad piece.
        UPDATE segments s SET bytes_done = least(s.bytes_done, keep) WHERE s.id = segment AND s.state = 'queued' AND s.lease_token IS NULL;
        RETURN false;
    END IF;
    now_state := CASE WHEN proof OR was.state = 'demoted' THEN 'demoted'
                      WHEN was.state = 'resting' OR rest_now OR was.state = 'trial' OR was.streak >= 2 THEN 'resting'
                      ELSE 'healthy' END;
    UPDATE transfer_mirrors m SET failures = m.failures + 1, bytes = m.bytes + received, streak = m.streak + 1, updated_at = now(),
           state = now_state,
           reason = CASE WHEN now_state <> was.state THEN haul_mirror_failed.reason ELSE m.reason END,
           rests = CASE WHEN now_state = 'resting' AND was.state <> 'resting' THEN m.rests + 1 ELSE m.rests END,
           retry_after = CASE WHEN now_state = 'demoted' THEN NULL
                              WHEN now_state = 'resting' AND was.state <> 'resting'
                              THEN now() + make_interval(secs => least(rest_cap, rest_base * 2 ^ least(m.rests, 30)) * (0.5 + 0.5 * jitter))
                              ELSE m.retry_after END
    WHERE m.transfer_id = transfer AND m.idx = failed;
    IF was.state IN ('healthy', 'trial') AND now_state <> 'healthy' THEN
        PERFORM haul_respread_mirrors(transfer, failed, segment);
    END IF;
    SELECT idx, host INTO next FROM transfer_mirrors
    WHERE transfer_id = transfer AND state = 'healthy' AND idx <> failed
    ORDER BY idx > failed DESC, streak, idx LIMIT 1;
    UPDATE segments s SET bytes_done = least(s.bytes_done, keep),
           mirror = coalesce(next.idx, s.mirror), host = coalesce(next.host, s.host),
           attempts = CASE WHEN was.state = 'trial' THEN greatest(s.attempts - 1, 0) ELSE s.attempts END,
           next_attempt_at = CASE WHEN was.state = 'trial' AND next.idx IS NOT NULL THEN now() ELSE s.next_attempt_at END
    WHERE s.id = segment AND s.state = 'queued' AND s.lease_token IS NULL;
    RETURN was.state IN ('healthy', 'trial') AND now_state <> 'healthy';
END $$;

-- An attempt on mirror `served` brought `received` bytes at `rate` bytes per second: a mirror on
-- trial is healthy again and takes its share of the queued segments; its streak and rests start over.
CREATE FUNCTION haul_mirror_served(transfer bigint, served integer, received bigint, rate bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    was text;
BEGIN
    SELECT m.state INTO was FROM transfer_mirrors m WHERE m.transfer_id = transfer AND m.idx = served FOR UPDATE;
    UPDATE transfer_mirrors m SET bytes = m.bytes + received, rate = coalesce(haul_mirror_served.rate, m.rate), updated_at = now(),
           streak = 0, rests = CASE WHEN m.state = 'resting' THEN m.rests ELSE 0 END,
           state = CASE WHEN m.state = 'trial' THEN 'healthy' ELSE m.state END,
           reason = CASE WHEN m.state = 'trial' THEN NULL ELSE m.reason END,
           retry_after = CASE WHEN m.state = 'trial' THEN NULL ELSE m.retry_after END
    WHERE m.transfer_id = transfer AND m.idx = served;
    IF was = 'trial' THEN
        PERFORM haul_respread_mirrors(transfer, NULL, NULL);
    END IF;
END $$;

-- Mirrors of `transfer` whose rest is over go on trial, each with one queued segment of the
-- current generation (of those with the fewest attempts, the first), so that a mirror still
-- down costs one attempt, not a share of the file. Returns how many woke.
CREATE FUNCTION haul_wake_mirrors(transfer bigint) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    woken record;
    woke integer := 0;
BEGIN
    FOR woken IN
        UPDATE transfer_mirrors SET state = 'trial', updated_at = now()
        WHERE transfer_id = transfer AND state = 'resting' AND retry_after <= now()
        RETURNING idx, host
    LOOP
        woke := woke + 1;
        UPDATE segments s SET mirror = woken.idx, host = woken.host
        WHERE s.id = (SELECT q.id FROM segments q
                      WHERE q.transfer_id = transfer AND q.state = 'queued' AND q.lease_token IS NULL AND coalesce(q.mirror, 0) <> woken.idx
                        AND q.generation = (SELECT generation FROM transfers WHERE id = transfer)
                        AND coalesce(q.mirror, 0) NOT IN (SELECT idx FROM transfer_mirrors WHERE transfer_id = transfer AND state = 'trial')
                      ORDER BY q.attempts, q.idx LIMIT 1 FOR UPDATE SKIP LOCKED);
    END LOOP;
    RETURN woke;
END $$;
