-- The newest migration version a database has applied (0: none). No parameters.
SELECT coalesce(max(version), 0) AS v FROM schema_migrations
