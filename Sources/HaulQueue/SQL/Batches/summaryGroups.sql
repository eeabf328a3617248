-- A batch's transfers by state: how many, how many unchanged (304), bytes known and bytes done.
-- $1 batch id.
SELECT t.state, count(*) AS n, count(*) FILTER (WHERE t.unchanged) AS unchanged, coalesce(sum(t.size) FILTER (WHERE NOT t.unchanged), 0) AS known,
       coalesce(sum(CASE WHEN t.state = 'done' AND NOT t.unchanged AND t.size IS NOT NULL THEN t.size
                         ELSE (SELECT coalesce(sum(s.bytes_done), 0) FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation)
                    END), 0) AS done
FROM transfers t WHERE t.batch_id = $1 GROUP BY t.state
