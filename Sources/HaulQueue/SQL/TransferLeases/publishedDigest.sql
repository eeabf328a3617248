-- The digest recorded when a transfer's file was published. $1 transfer id.
SELECT computed_digest FROM transfers WHERE id = $1
