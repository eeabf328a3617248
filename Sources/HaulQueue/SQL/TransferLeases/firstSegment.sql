-- The planner's own segment 0 of a plan just written, as a claimed segment. $1 transfer id, $2 generation.
SELECT {{ClaimedSegment.returning}} FROM segments s JOIN transfers t ON t.id = s.transfer_id WHERE s.transfer_id = $1 AND s.generation = $2 AND s.idx = 0
