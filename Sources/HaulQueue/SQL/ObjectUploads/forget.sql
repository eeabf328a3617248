-- Forgets an aborted multipart upload, if the transfer still names it. $1 transfer id, $2 upload id.
UPDATE transfers SET object_upload_id = NULL WHERE id = $1 AND object_upload_id = $2
