-- Each checkpoint records how fast its segment was streaming since the one before (bytes per
-- second), so that a straggler split leaves the running worker the bytes it may already have
-- received or will receive before it learns of the cut, and no more: a fast segment keeps up
-- to two checkpoints' worth, a slow one (the straggler a split is for) little.
ALTER TABLE segments ADD COLUMN rate double precision;
