-- A straggler split (splitStraggler.sql) shrinks a running segment and leaves the piece it cut
-- off waiting for the holder's word, which comes from here, run before each of the holder's
-- checkpoints and its completion: a holder that did not know of the cut and is already past
-- it takes the piece back whole (nobody fetched any of it), so those bytes are not fetched
-- twice; a holder that knows of the cut lets the piece be claimed at once. The fence is the
-- holder's lease token. The holder's row is read first, by its id, and the piece is looked
-- for among its transfer's segments only when the holder is past a cut or knows of one: the
-- checkpoints of a segment never cut cost that one row lookup, not a walk of the segments.
-- $1 segment id, $2 lease token, $3 bytes the holder has, $4 the segment's length as the holder
-- knows it, $5 whether the holder learned of a cut (ClaimedSegment.knowsOfCut).
-- Returns whether a piece was let go (a lane should look for work).
WITH holder AS MATERIALIZED (
    SELECT s.id, s.transfer_id, s.generation, s.byte_offset, s.length, s.length < $4 AS past,
           (SELECT c.id FROM segments c WHERE {{SegmentLeases.cutOff}}) AS piece
    FROM segments s
    WHERE s.id = $1 AND s.lease_token = $2::uuid AND s.state = 'running' AND (s.length < $4 AND $3 > s.length OR s.length = $4 AND $5)
), let_go AS (
    UPDATE segments c SET next_attempt_at = now() FROM holder s
    WHERE c.id = s.piece AND NOT s.past AND c.next_attempt_at > now() AND {{SegmentLeases.cutOff}}
    RETURNING c.id
), taken_back AS (
    DELETE FROM segments c USING holder s WHERE c.id = s.piece AND s.past AND {{SegmentLeases.cutOff}}
    RETURNING c.length
), extended AS (
    UPDATE segments s SET length = s.length + taken_back.length FROM taken_back WHERE s.id = $1
)
SELECT EXISTS (SELECT 1 FROM let_go) AS let_go
