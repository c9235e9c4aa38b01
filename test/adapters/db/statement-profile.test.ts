import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { migrateToLatest, openDatabase } from '../../../src/adapters/db/index.js';
import { withStatementCache } from '../../../src/adapters/db/sqlite-dialect.js';
import { StatementProfile } from '../../../src/adapters/db/statement-profile.js';
import { makeTempDir } from '../../helpers/tmp.js';

/** The profile's rows by SQL text: runs and total ms. */
function rowsOf(text: string): Map<string, { runs: number; ms: number }> {
  const [header, ...lines] = text.trimEnd().split('\n');
  assert.equal(header, 'total_ms\truns\tms_per_run\tsql');
  return new Map(lines.map((line) => {
    const [ms, runs, , query] = line.split('\t');
    return [query!, { runs: Number(runs), ms: Number(ms) }];
  }));
}

describe('SQLite statement profile (SQL_PROFILE_FILE)', () => {
  it('counts each statement text its runs and writes the table, costliest first, when the database closes', async () => {
    const tmp = await makeTempDir('tollgate-sqlprof-');
    try {
      const out = join(tmp.dir, 'sql-profile.tsv');
      const handle = openDatabase(null, tmp.dir, { statementProfileFile: out });
      await migrateToLatest(handle.db);
      for (let i = 0; i < 7; i++) await sql`select ${i} as n`.execute(handle.db);
      await handle.db.transaction().execute(async (trx) => {
        for (let i = 0; i < 3; i++) await sql`select count(*) as n from packages where name = ${`p${i}`}`.execute(trx);
      });
      assert.equal(existsSync(out), false, 'written at close, not before');
      await handle.close();
      const text = readFileSync(out, 'utf8');
      const rows = rowsOf(text);
      assert.equal(rows.get('select ? as n')?.runs, 7);
      assert.equal(rows.get('select count(*) as n from packages where name = ?')?.runs, 3);
      assert.ok((rows.get('commit')?.runs ?? 0) >= 1, 'the transaction\'s commit is a statement too');
      const totals = [...rows.values()].map((r) => r.ms);
      assert.deepEqual(totals, [...totals].sort((a, b) => b - a));
      assert.equal((statSync(out).mode & 0o777).toString(8), '600');
    } finally {
      await tmp.cleanup();
    }
  });

  it('writes nothing and leaves the statements as they are without it', async () => {
    const tmp = await makeTempDir('tollgate-sqlprof-');
    try {
      const handle = openDatabase(null, tmp.dir);
      await migrateToLatest(handle.db);
      const { rows } = await sql<{ n: number }>`select 41 + 1 as n`.execute(handle.db);
      assert.equal(rows[0]!.n, 42);
      await handle.close();
      assert.equal(existsSync(join(tmp.dir, 'sql-profile.tsv')), false);
    } finally {
      await tmp.cleanup();
    }
  });

  it('hands out SQLite\'s own statement when off, and one that counts its runs when on', () => {
    const own = { reader: false, all: () => [], iterate: () => [][Symbol.iterator](), run: () => ({ changes: 1, lastInsertRowid: 1 }) } as unknown as SqliteStatement;
    const database: SqliteDatabase = { close: () => undefined, prepare: () => own };
    assert.equal(withStatementCache(database).prepare('select 1'), own);
    const profile = new StatementProfile('/nonexistent/never-written');
    const watched = withStatementCache(database, profile).prepare('select 1');
    assert.notEqual(watched, own);
    watched.run([]);
    assert.match(profile.table(), /\t1\t[0-9.]+\tselect 1\n$/);
  });
});
