import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { Migrator, type Migration } from 'kysely';
import { migrateToLatest, migrationsUpTo, openDatabase, type Db } from '../../../src/adapters/db/index.js';
import { insertDistributionIfMissing } from '../../../src/adapters/db/distributions.table.js';
import { indexFingerprint } from '../../helpers/index-fingerprint.js';
import { insertPackage, type PackageRow } from '../../../src/adapters/db/packages.table.js';
import { INDEXED_STATUSES, isIndexed, PACKAGE_STATUSES, type PackageStatus } from '../../../src/domain/distributions.js';
import { isoUtc } from '../../../src/domain/time.js';
import { backends, freshPostgres } from '../../helpers/app.js';
import { makeTempDir } from '../../helpers/tmp.js';

/** Migration 0018: the index totals kept in the distribution's row by triggers, against the rows themselves. */

const DISTS = ['jammy', 'noble'] as const;
let nextSeq = 1;

function row(distribution: string, status: PackageStatus, seq = nextSeq++): PackageRow {
  const now = isoUtc();
  const name = `p${randomUUID().slice(0, 8)}`;
  const sha = randomUUID().replace(/-/g, '').padEnd(64, '0');
  return {
    id: randomUUID(), distribution, format: 'deb', name, version: '1.5.0+ds1-1+b4', arch: 'amd64', component: 'main', status, cve_status: 'not_scanned',
    sha256: sha, upload_sha256: sha, upload_size: 1, signed_by: null, sha512: '0', sha1: '0', md5: '0', size: 1, filename: `${name}.deb`,
    pool_path: `apt/pool/main/p/${name}/${name}_1.5.0+ds1-1+b4_amd64.deb`, source_name: name, source_version: '1.5.0+ds1-1+b4', metadata: '{}',
    index_entry: `Package: ${name}`, relations: '{}', files: '[]', pipeline: '[]', findings: '{}', reasons: '[]', uploaded_by: null, sla_deadline: null,
    seq, created_at: now, updated_at: now, listed_generation: 0,
  };
}

/** The totals as an aggregate over the rows computes them, in JavaScript. */
async function fromRows(db: Db, codename: string) {
  const rows = await db.selectFrom('packages').select(['seq', 'status']).where('distribution', '=', codename).execute();
  const seqs = rows.filter((r) => isIndexed(r.status)).map((r) => Number(r.seq));
  return { count: seqs.length, sum: seqs.reduce((a, b) => a + b, 0), max: seqs.length ? Math.max(...seqs) : 0, mod: seqs.reduce((a, b) => a + (b % 65521), 0) };
}

async function assertTotals(db: Db, what: string): Promise<void> {
  for (const codename of DISTS) assert.deepEqual(await indexFingerprint(db, codename), await fromRows(db, codename), `${codename}: ${what}`);
}

/** The distributions' rows, as the service adds them at start-up. */
async function addDistributions(db: Db): Promise<void> {
  for (const codename of DISTS) await insertDistributionIfMissing(db, { codename, format: 'deb', description: codename, generation: 0, published_generation: 0, published_at: null, initialized_at: null, definition: null, retired_at: null });
}

/** Inserts the row as it is, without taking a generation (as rows stored before 0018 were). */
const insertRaw = (db: Db, r: PackageRow) => db.insertInto('packages').values(r).execute();

for (const backend of backends()) {
  describe(`index totals, migration 0018 (${backend})`, () => {
    const open = async () => {
      const tmp = await makeTempDir('tollgate-totals-');
      const pgdb = backend === 'postgres' ? await freshPostgres() : null;
      const handle = openDatabase(pgdb ? pgdb.url : null, tmp.dir);
      return { db: handle.db, close: async () => { await handle.close(); await pgdb?.drop(); await tmp.cleanup(); } };
    };

    it('computes the totals of the rows already stored, then keeps them through every kind of change', async () => {
      const { db, close } = await open();
      try {
        const migrations: Record<string, Migration> = migrationsUpTo('0017-search-statistics');
        const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateToLatest();
        if (error) throw error;
        await addDistributions(db);
        // Rows of every status, in both distributions, and a seq past 65521 (the modulo sum differs from the sum).
        for (const status of PACKAGE_STATUSES) {
          await insertRaw(db, row('jammy', status));
          await insertRaw(db, row('noble', status, 70_000 + nextSeq++));
        }
        await migrateToLatest(db);
        const first = await indexFingerprint(db, 'jammy');
        assert.equal(first.count, INDEXED_STATUSES.length);
        await assertTotals(db, 'after the migration');

        const stored: PackageRow[] = [];
        for (const status of PACKAGE_STATUSES) {
          const r = row('jammy', status);
          await db.transaction().execute((trx) => insertPackage(trx, r, []));
          stored.push(r);
        }
        await assertTotals(db, 'inserts of every status');

        const [published, pending, accepted] = [stored[0]!, stored[1]!, stored[2]!];
        const setRow = (r: PackageRow, values: Partial<PackageRow>) => db.updateTable('packages').set(values).where('id', '=', r.id).execute();
        await setRow(published, { status: 'accepted_risk' });
        await assertTotals(db, 'from one indexed status to another');
        await setRow(published, { status: 'quarantined' });
        await assertTotals(db, 'out of the index');
        await setRow(pending, { status: 'published', seq: 90_000 });
        await assertTotals(db, 'into the index with a new seq');
        await setRow(accepted, { seq: 95_000 });
        await assertTotals(db, 'a listed row given a new seq');
        await setRow(accepted, { distribution: 'noble' });
        await assertTotals(db, 'moved to another distribution');
        await setRow(accepted, { reasons: '["x"]', findings: '{"high":1}' });
        await assertTotals(db, 'other columns changed');
        await db.deleteFrom('packages').where('id', '=', pending.id).execute();
        await db.deleteFrom('packages').where('id', '=', stored[3]!.id).execute();
        await assertTotals(db, 'deletes of a listed and an unlisted row');
        await db.updateTable('packages').set({ status: 'published' }).where('distribution', '=', 'noble').execute();
        await assertTotals(db, 'many rows in one statement');

        // Inserted, changed and deleted in one transaction: nothing left; rolled back: nothing either.
        await db.transaction().execute(async (trx) => {
          const r = row('jammy', 'published');
          await insertPackage(trx, r, []);
          await trx.updateTable('packages').set({ status: 'exception' }).where('id', '=', r.id).execute();
          await trx.deleteFrom('packages').where('id', '=', r.id).execute();
        });
        await assertTotals(db, 'a row inserted, changed and deleted in one transaction');
        const before = await indexFingerprint(db, 'jammy');
        await assert.rejects(db.transaction().execute(async (trx) => {
          await insertPackage(trx, row('jammy', 'published'), []);
          throw new Error('rolled back');
        }), /rolled back/);
        assert.deepEqual(await indexFingerprint(db, 'jammy'), before, 'a rolled-back insert leaves the totals');
      } finally {
        await close();
      }
    });

    it('keeps them under concurrent uploads to the same distribution', async () => {
      const { db, close } = await open();
      try {
        await migrateToLatest(db);
        await addDistributions(db);
        const rows = Array.from({ length: 40 }, (_, i) => row(DISTS[i % 2]!, PACKAGE_STATUSES[i % PACKAGE_STATUSES.length]!));
        await Promise.all(rows.map((r) => db.transaction().execute((trx) => insertPackage(trx, r, []))));
        // And status changes racing new uploads (the review queue's decisions beside the uploads).
        await Promise.all([
          ...rows.slice(0, 20).map((r) => db.transaction().execute(async (trx) => {
            await trx.updateTable('packages').set({ status: r.status === 'published' ? 'quarantined' : 'published' }).where('id', '=', r.id).execute();
          })),
          ...Array.from({ length: 20 }, (_, i) => db.transaction().execute((trx) => insertPackage(trx, row(DISTS[i % 2]!, 'published'), []))),
        ]);
        await assertTotals(db, 'after concurrent writes');
      } finally {
        await close();
      }
    });
  });
}
