-- For each (URL, local target), the newest transfer of an earlier get that is neither done nor
-- canceled, in the order asked. $1 URLs (text[]), $2 local targets (text[]). One row each; id NULL when none.
SELECT (SELECT t.id FROM transfers t
        WHERE t.url = w.url AND t.options ? 'local_target' AND t.options->>'local_target' = w.target AND t.state NOT IN ('done','canceled')
        ORDER BY t.id DESC LIMIT 1) AS id
FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS w(url, target, n)
ORDER BY w.n
