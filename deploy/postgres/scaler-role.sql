-- A read-only PostgreSQL role for the KEDA scaler (deploy/kubernetes/keda-scaledobject.yaml).
--
--   psql "$DATABASE_URL" -v scaler_password="$(openssl rand -hex 24)" -f deploy/postgres/scaler-role.sql
--
-- Run as the database owner (or a superuser), after `haul migrate`; running it again is safe.
-- The role can count queued and in-flight work and nothing else: it cannot read URLs, headers
-- or options (which may hold credentials), and it cannot write. Put its URL in the
-- haul-db-scaler Secret (secret-scaler.example.yaml).
\set ON_ERROR_STOP on
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'haul_scaler') AS create_role \gset
\if :create_role
CREATE ROLE haul_scaler LOGIN;
\endif
ALTER ROLE haul_scaler PASSWORD :'scaler_password' CONNECTION LIMIT 4 NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
ALTER ROLE haul_scaler SET default_transaction_read_only = on;
ALTER ROLE haul_scaler SET statement_timeout = '10s';
GRANT CONNECT ON DATABASE :"DBNAME" TO haul_scaler;
GRANT USAGE ON SCHEMA public TO haul_scaler;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM haul_scaler;
-- Exactly the columns the two KEDA triggers read.
GRANT SELECT (state, next_attempt_at) ON segments TO haul_scaler;
GRANT SELECT (state) ON transfers TO haul_scaler;
