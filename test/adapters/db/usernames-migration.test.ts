import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { Migrator, type Migration } from 'kysely';
import { migrateToLatest, openDatabase, type Db } from '../../../src/adapters/db/index.js';
import * as m0001 from '../../../src/adapters/db/migrations/0001-foundation.js';
import * as m0002 from '../../../src/adapters/db/migrations/0002-packages.js';
import * as m0003 from '../../../src/adapters/db/migrations/0003-security.js';
import * as m0004 from '../../../src/adapters/db/migrations/0004-downloads.js';
import { isoUtc } from '../../../src/domain/time.js';
import { backends, freshPostgres } from '../../helpers/app.js';
import { makeTempDir } from '../../helpers/tmp.js';

/** Migration 0005: user names unique without regard to case, on a database from before it. */

/** A database as the release before 0005 left it. */
async function databaseBefore0005(db: Db): Promise<void> {
  const migrations: Record<string, Migration> = { '0001-foundation': m0001, '0002-packages': m0002, '0003-security': m0003, '0004-downloads': m0004 };
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateToLatest();
  if (error) throw error;
}

async function addUser(db: Db, username: string): Promise<string> {
  const id = randomUUID();
  const now = isoUtc();
  await db.insertInto('users').values({
    id, username, email: null, full_name: null, password_hash: null, role: 'reader', is_active: 1, source: 'local',
    token_version: 0, mfa_secret: null, mfa_enabled: 0, last_login: null, created_at: now, updated_at: now,
  }).execute();
  return id;
}

for (const backend of backends()) {
  describe(`migration 0005-usernames (${backend})`, () => {
    it('refuses to run while names differ only by case, naming the accounts, then enforces the rule', async () => {
      const tmp = await makeTempDir('tollgate-usernames-');
      const pgdb = backend === 'postgres' ? await freshPostgres() : null;
      const { db, close } = openDatabase(pgdb ? pgdb.url : null, tmp.dir);
      try {
        await databaseBefore0005(db);
        await addUser(db, 'Admin');
        const clash = await addUser(db, 'admin');
        await addUser(db, 'bob');
        await db.insertInto('login_failures').values({ username: 'Bob', at: isoUtc() }).execute();

        await assert.rejects(migrateToLatest(db), (error: Error) => {
          assert.match(error.message, /0005-usernames/);
          assert.match(error.message, /'Admin'/);
          assert.match(error.message, /'admin'/);
          assert.match(error.message, new RegExp(clash));
          assert.doesNotMatch(error.message, /'bob'/);
          return true;
        });

        // What the message tells the operator to do: rename one of them, then start again.
        await db.updateTable('users').set({ username: 'admin-old' }).where('id', '=', clash).execute();
        await migrateToLatest(db);
        await assert.rejects(addUser(db, 'ADMIN'), /unique|UNIQUE/);
        const failures = await db.selectFrom('login_failures').select('username').execute();
        assert.deepEqual(failures.map((f) => f.username), ['bob'], 'lockout counters keyed by the lower-case name');
      } finally {
        await close();
        await pgdb?.drop();
        await tmp.cleanup();
      }
    });
  });
}
