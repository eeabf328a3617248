-- How many other haul sessions are connected to the database (by application_name). $1 this session's application name.
SELECT count(*) AS n
FROM pg_stat_activity
WHERE application_name LIKE 'haul/%'
  AND application_name <> $1
