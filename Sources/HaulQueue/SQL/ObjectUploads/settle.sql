-- Removes an announcement once its upload is recorded or gone. $1 intent id.
DELETE FROM object_upload_intents WHERE id = $1
