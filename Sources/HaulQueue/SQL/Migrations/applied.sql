-- The migration versions a database has applied. No parameters.
SELECT version FROM schema_migrations
