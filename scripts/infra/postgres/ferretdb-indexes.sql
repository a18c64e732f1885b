-- Applied by scripts/infra.sh to the `ferretdb` database at every start of PostgreSQL (idempotent).
--
-- Why: FerretDB 1.24's PostgreSQL backend builds each index as a btree over `_jsonb->'field'`,
-- but hands equality filters down as `_jsonb->'field' @> '<value>'` (jsonb containment), an
-- operator a btree cannot serve: even `find({_id: k})` is a sequential scan of the whole table.
-- Only its UPDATE/DELETE by `_jsonb->'_id' = k` use the unique `_id` btree.
--
-- What: each btree FerretDB creates gets a GIN twin (jsonb_path_ops) over the same expressions,
-- which does serve `@>`: `_id` lookups, the read half of every guarded update or upsert, and the
-- equality parts of queries on indexed fields become index scans. FerretDB does not know these
-- indexes (listIndexes shows only its own); a twin is dropped with its btree or its table.
-- plan_cache_mode = force_custom_plan (ferretdb-backend.conf, in both infra.sh's and the container's PostgreSQL) keeps FerretDB's prepared statements
-- (`_jsonb->$1 @> $2`) from falling back to a generic plan that no index expression can match.
--
-- A local/CI stand-in only: nothing here is needed by, or applied to, a real MongoDB.

SET client_min_messages = warning;

-- What FerretDB sends, for diagnosis: SELECT calls, mean_exec_time, query FROM pg_stat_statements
-- (the library is preloaded by infra.conf).
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;

-- A twin's name: the btree's (cut to fit PostgreSQL's 63 bytes) and its oid.
CREATE OR REPLACE FUNCTION infra_ferretdb_gin_name(btree_name text, btree oid) RETURNS text
LANGUAGE sql IMMUTABLE AS $fn$ SELECT format('%s_gin_%s', left(btree_name, 40), btree) $fn$;

-- The twin of a FerretDB btree; nothing for any other index.
CREATE OR REPLACE FUNCTION infra_ferretdb_gin_for(btree oid) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  ix record;
  cols text;
  ours boolean;
BEGIN
  SELECT i.indexrelid, i.indnatts, c.relname AS index_name, t.relname AS table_name,
         n.nspname AS schema_name, am.amname
    INTO ix
    FROM pg_index i
    JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_class t ON t.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    JOIN pg_am am ON am.oid = c.relam
   WHERE i.indexrelid = btree;
  IF NOT FOUND OR ix.amname <> 'btree' OR ix.schema_name IN ('pg_catalog', 'information_schema')
     OR ix.table_name LIKE '\_ferretdb\_%' THEN
    RETURN;
  END IF;
  -- FerretDB's keys are all expressions over `_jsonb`; pg_get_indexdef(index, k) gives one,
  -- parenthesized: ((_jsonb -> 'field'::text))
  SELECT string_agg(format('%s jsonb_path_ops', d), ', ' ORDER BY k), bool_and(d LIKE '((\_jsonb -> %')
    INTO cols, ours
    FROM (SELECT k, pg_get_indexdef(ix.indexrelid, k, false) AS d FROM generate_series(1, ix.indnatts) AS k) AS keys;
  IF cols IS NULL OR NOT ours THEN
    RETURN;
  END IF;
  -- fastupdate off: no pending list for lookups to scan after a burst of inserts
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %I.%I USING gin (%s) WITH (fastupdate = off)',
                 infra_ferretdb_gin_name(ix.index_name, ix.indexrelid), ix.schema_name, ix.table_name, cols);
EXCEPTION WHEN OTHERS THEN
  -- an optimisation only: never the reason FerretDB's own DDL fails
  RAISE WARNING 'no GIN twin for index %: %', btree, SQLERRM;
END
$fn$;

CREATE OR REPLACE FUNCTION infra_ferretdb_gin_on_create() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  cmd record;
BEGIN
  FOR cmd IN SELECT objid FROM pg_event_trigger_ddl_commands() WHERE object_type = 'index' LOOP
    PERFORM infra_ferretdb_gin_for(cmd.objid);
  END LOOP;
END
$fn$;

-- dropIndexes: the twin goes with its btree (dropping a table drops both anyway).
CREATE OR REPLACE FUNCTION infra_ferretdb_gin_on_drop() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  obj record;
BEGIN
  FOR obj IN SELECT objid, schema_name, object_name FROM pg_event_trigger_dropped_objects()
              WHERE object_type = 'index' AND object_name NOT LIKE '%\_gin\_%' LOOP
    EXECUTE format('DROP INDEX IF EXISTS %I.%I', obj.schema_name, infra_ferretdb_gin_name(obj.object_name, obj.objid));
  END LOOP;
END
$fn$;

DROP EVENT TRIGGER IF EXISTS infra_ferretdb_gin;
CREATE EVENT TRIGGER infra_ferretdb_gin ON ddl_command_end
  WHEN TAG IN ('CREATE INDEX')
  EXECUTE FUNCTION infra_ferretdb_gin_on_create();

DROP EVENT TRIGGER IF EXISTS infra_ferretdb_gin_drop;
CREATE EVENT TRIGGER infra_ferretdb_gin_drop ON sql_drop
  WHEN TAG IN ('DROP INDEX')
  EXECUTE FUNCTION infra_ferretdb_gin_on_drop();

-- Backfill: btrees made before this file was applied (a data dir from before it existed).
DO $do$
BEGIN
  PERFORM infra_ferretdb_gin_for(i.indexrelid)
     FROM pg_index i
     JOIN pg_class c ON c.oid = i.indexrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_am am ON am.oid = c.relam
    WHERE am.amname = 'btree' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
      AND NOT EXISTS (SELECT 1 FROM pg_class g
                       WHERE g.relnamespace = c.relnamespace AND g.relname = infra_ferretdb_gin_name(c.relname, i.indexrelid));
END
$do$;
