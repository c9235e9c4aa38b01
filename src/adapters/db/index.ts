import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, type Migration, type MigrationProvider } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { SqliteDialectKeepingCause, withStatementCache } from './sqlite-dialect.js';
import { PromptlyCollectedClient } from './pg-client.js';
import { alreadyDurable, walDurability, type Durable } from './durability.js';
import * as m0001 from './migrations/0001-foundation.js';
import * as m0002 from './migrations/0002-packages.js';
import * as m0003 from './migrations/0003-security.js';
import * as m0004 from './migrations/0004-downloads.js';
import * as m0005 from './migrations/0005-usernames.js';
import * as m0006 from './migrations/0006-sbom.js';
import * as m0007 from './migrations/0007-imports.js';
import * as m0008 from './migrations/0008-rpm-signatures.js';
import * as m0009 from './migrations/0009-import-claims.js';
import * as m0010 from './migrations/0010-distribution-definitions.js';
import * as m0011 from './migrations/0011-read-tokens.js';
import * as m0012 from './migrations/0012-token-download-totals.js';
import * as m0013 from './migrations/0013-deferred-file-lists.js';
import * as m0014 from './migrations/0014-index-order.js';
import * as m0015 from './migrations/0015-catalog-generation.js';
import * as m0016 from './migrations/0016-catalog-generation-answers.js';
import * as m0017 from './migrations/0017-search-statistics.js';
import * as m0018 from './migrations/0018-index-totals.js';
import { StatementProfile } from './statement-profile.js';

export type Db = Kysely<Database>;
export type DbDialect = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Db;
  dialect: DbDialect;
  close(): Promise<void>;
  /** Resolves once the commits made so far would survive a power loss (durability.ts). */
  durable: Durable;
}

/** Migrations in code, in order; the name is the sort key Kysely records. */
const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-packages': m0002,
  '0003-security': m0003,
  '0004-downloads': m0004,
  '0005-usernames': m0005,
  '0006-sbom': m0006,
  '0007-imports': m0007,
  '0008-rpm-signatures': m0008,
  '0009-import-claims': m0009,
  '0010-distribution-definitions': m0010,
  '0011-read-tokens': m0011,
  '0012-token-download-totals': m0012,
  '0013-deferred-file-lists': m0013,
  '0014-index-order': m0014,
  '0015-catalog-generation': m0015,
  '0016-catalog-generation-answers': m0016,
  '0017-search-statistics': m0017,
  '0018-index-totals': m0018,
};

/** The migrations up to and including `last`: a database as that release left it (for migration tests). */
export function migrationsUpTo(last: string): Record<string, Migration> {
  return Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= last));
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export interface OpenDatabaseOptions {
  /** SQLite only: where to write the per-statement time table when the database closes (statement-profile.ts). */
  statementProfileFile?: string | null;
}

/** Opens SQLite (WAL) in dataDir by default, PostgreSQL when the URL says postgres://. */
export function openDatabase(databaseUrl: string | null, dataDir: string, options: OpenDatabaseOptions = {}): DatabaseHandle {
  if (databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl)) {
    // A server that does not answer fails a request in seconds (503) instead of holding it.
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, connectionTimeoutMillis: 5000, Client: PromptlyCollectedClient });
    // A connection the server closed (a restart, a failover) fails the query under way, or the
    // next one on that client, and the pool then drops it; but the 'error' event it also emits,
    // on the pool for an idle client and on the client itself while it is checked out (a
    // transaction awaiting file work), would end the process unheard.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy(), durable: alreadyDurable };
  }
  const file = databaseUrl?.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : join(dataDir, 'tollgate.db');
  restrictToOwner(file);
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const profile = options.statementProfileFile ? new StatementProfile(options.statementProfileFile) : undefined;
  const db = new Kysely<Database>({ dialect: new SqliteDialectKeepingCause({ database: withStatementCache(sqlite, profile) }) });
  const close = async () => {
    await db.destroy();
    profile?.write();
  };
  return { db, dialect: 'sqlite', close, durable: walDurability(`${file}-wal`) };
}

/**
 * The database holds password hashes, token digests and encrypted secrets: owner-only (0600).
 * SQLite gives its -wal and -shm files the database file's mode, so the file is created 0600
 * before SQLite opens it; side files of an older installation are tightened too.
 */
function restrictToOwner(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    if (existsSync(path)) chmodSync(path, 0o600);
  }
}

export async function migrateToLatest(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`);
  }
}
