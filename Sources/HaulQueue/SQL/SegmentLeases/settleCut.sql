-- A straggler split (splitStraggler.sql) shrinks a running segment and leaves the piece it cut
-- off waiting for the holder's word, which comes from here, run before each of the holder's
-- checkpoints and its completion: a holder that did not know of the cut and is already past
-- it takes the piece back whole (nobody fetched any of it), so those bytes are not fetched
-- twice; a holder that knows of the cut lets the piece be claimed at once. The fence is the
-- holder's lease token.
-- $1 segment id, $2 lease token, $3 bytes the holder has, $4 the segment's length as the holder
-- knows it.
-- Returns whether a piece was let go (a lane should look for work).
WITH let_go AS (
    UPDATE segments c SET next_attempt_at = now() FROM segments s
    WHERE s.id = $1 AND s.lease_token = $2::uuid AND s.state = 'running' AND s.length = $4 AND c.next_attempt_at > now() AND {{SegmentLeases.cutOff}}
    RETURNING c.id
), taken_back AS (
    DELETE FROM segments c USING segments s
    WHERE s.id = $1 AND s.lease_token = $2::uuid AND s.state = 'running' AND s.length < $4 AND $3 > s.length AND {{SegmentLeases.cutOff}}
    RETURNING c.length
), extended AS (
    UPDATE segments s SET length = s.length + taken_back.length FROM taken_back WHERE s.id = $1
)
SELECT EXISTS (SELECT 1 FROM let_go) AS let_go
