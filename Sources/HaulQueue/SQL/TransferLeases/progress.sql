-- How far earlier finalizers got with a transfer: published, about to publish this generation,
-- extracted, and the tus upload URL. $1 transfer id, $2 generation.
SELECT published_at IS NOT NULL AS published, coalesce(publishing_generation = $2, false) AS publishing,
       extracted_at IS NOT NULL AS extracted, upload_url
FROM transfers WHERE id = $1
