import type { StatementProfile } from './statement-profile.js';
import { SqliteDialect, type DatabaseConnection, type Driver, type SqliteDatabase, type SqliteStatement } from 'kysely';

/**
 * SQLite rolls a transaction back by itself when a statement in it fails with SQLITE_FULL,
 * SQLITE_IOERR, SQLITE_BUSY or SQLITE_NOMEM. Kysely then sends its own ROLLBACK, which fails with
 * "cannot rollback - no transaction is active" and replaces the error that mattered (a full disk
 * became a 500 instead of a 507). This dialect lets that second error go: the transaction is rolled
 * back either way, and the caller sees the first one.
 */
export class SqliteDialectKeepingCause extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    const rollback = driver.rollbackTransaction.bind(driver);
    driver.rollbackTransaction = async (connection: DatabaseConnection, ...rest: unknown[]) => {
      try {
        await (rollback as (c: DatabaseConnection, ...r: unknown[]) => Promise<void>)(connection, ...rest);
      } catch (error) {
        if (error instanceof Error && /no transaction is active/.test(error.message)) return;
        throw error;
      }
    };
    return driver;
  }
}

/** Prepared statements kept per SQL text (least recently used dropped past this many). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query anew; most texts recur (an upload runs the same
 * dozen), and preparing was a tenth of an upload's database time. Reusing a statement is safe
 * here: Kysely runs one query at a time on its single connection, a streamed one included, and
 * SQLite re-prepares a statement by itself after a schema change.
 */
export function withStatementCache(db: SqliteDatabase, profile?: StatementProfile): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare(sql: string): SqliteStatement {
      const cached = cache.get(sql);
      if (cached) {
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const prepared = db.prepare(sql);
      const statement = profile ? profile.watch(sql, prepared) : prepared;
      cache.set(sql, statement);
      if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      return statement;
    },
  };
}
