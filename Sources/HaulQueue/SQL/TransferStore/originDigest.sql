-- Records the digest the origin sent as the expected one, when none was given. $1 transfer id, $2 digest.
UPDATE transfers SET expected_digest = $2 WHERE id = $1 AND expected_digest IS NULL
