-- The figures of some transfers that a progress line sums (TransferProgress): each one's state,
-- size and bytes saved, counted as TransferStatus counts them, without the rest of a status
-- (half the time a row of `statuses` takes). $1 transfer ids (bigint[]).
SELECT t.id, t.state, t.size,
       coalesce((SELECT sum(s.bytes_done) FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation),
                CASE WHEN t.state = 'done' AND NOT t.unchanged THEN t.size END, 0) AS bytes_done
FROM transfers t
WHERE t.id = ANY($1::bigint[])
