-- retry --checksum: the digest the retried transfers' files must have from now on.
-- $1 transfer ids (bigint[]), $2 the digest (algorithm:hex).
UPDATE transfers SET expected_digest = $2 WHERE id = ANY($1::bigint[])
