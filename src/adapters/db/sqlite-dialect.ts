import { SqliteDialect, type DatabaseConnection, type Driver } from 'kysely';

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
