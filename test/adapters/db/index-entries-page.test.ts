/**
 * The full publish reads a distribution's indexed packages a page at a time, in index order
 * (seq, then id). Packages committed in one transaction share a seq, so a page may end inside a
 * run of equal seqs: the next page must continue after the last id, skipping none and repeating
 * none, and leave out other distributions and packages that are not indexed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { filesListedBetween, filesListedBetweenQuery, indexEntriesPage } from '../../../src/adapters/db/distributions.table.js';
import type { PackageRow } from '../../../src/adapters/db/packages.table.js';
import { isoUtc } from '../../../src/domain/time.js';
import { backends, startTestApp, type TestApp } from '../../helpers/app.js';

for (const backend of backends()) {
  describe(`index entries by page (${backend})`, () => {
    let t: TestApp;
    const codename = 'focal';

    const row = (id: string, seq: number, status: PackageRow['status'] = 'published', distribution = codename): PackageRow => {
      const now = isoUtc();
      const name = `page-${id}`;
      return {
        id, distribution, format: 'deb', name, version: '1.0', arch: 'amd64', component: 'main', status, cve_status: 'not_scanned',
        sha256: id.padEnd(64, '0'), upload_sha256: id.padEnd(64, '0'), upload_size: 1, signed_by: null, sha512: '0', sha1: '0', md5: '0', size: 1,
        filename: `${name}.deb`, pool_path: `apt/pool/main/p/${name}/${name}_1.0_amd64.deb`, source_name: name, source_version: '1.0',
        metadata: '{}', index_entry: `Package: ${name}`, relations: '{}', files: '[]', pipeline: '[]', findings: '{}', reasons: '[]',
        uploaded_by: null, sla_deadline: null, seq, created_at: now, updated_at: now,
      };
    };

    before(async () => {
      t = await startTestApp({ backend });
      // Inserted out of order; three share seq 4 and two seq 9.
      await t.ctx.db.insertInto('packages').values([
        row('e', 9), row('a', 4), row('h', 2), row('c', 4), row('x', 3, 'quarantined'), row('b', 4),
        row('d', 9), row('f', 12), row('y', 5, 'published', 'jammy'), row('g', 1),
      ]).execute();
    });
    after(() => t.close());

    it('returns every indexed package once, in seq then id order, whatever the page size', async () => {
      const expected = ['g', 'h', 'a', 'b', 'c', 'd', 'e', 'f'];
      for (const limit of [1, 2, 3, 100]) {
        const seen: string[] = [];
        let afterKey: { seq: number; id: string } | null = null;
        // Bounded: a condition that goes back to earlier rows would otherwise page for ever.
        for (let pages = 0; pages <= expected.length; pages++) {
          const rows = await indexEntriesPage(t.ctx.db, codename, afterKey, limit);
          assert.ok(rows.length <= limit);
          seen.push(...rows.map((r) => r.id));
          if (rows.length < limit) break;
          const last = rows.at(-1)!;
          afterKey = { seq: Number(last.seq), id: last.id };
        }
        assert.deepEqual(seen, expected, `page size ${limit}`);
      }
    });

    it('reads the file lists that arrived between two generations through packages_listed, not the whole distribution', async () => {
      await t.ctx.db.updateTable('packages').set({ listed_generation: 7 }).where('id', 'in', ['a', 'f', 'x']).execute();
      await t.ctx.db.updateTable('packages').set({ listed_generation: 3 }).where('id', 'in', ['b', 'g']).execute();
      const rows = await filesListedBetween(t.ctx.db, codename, 5, 8, 10);
      assert.deepEqual(rows.map((r) => r.id), ['a'], 'listed after 5 and by 8, indexed, seq <= 10');
      if (backend === 'sqlite') {
        // The query as built, explained: every append runs it, so it must not scan the distribution.
        const compiled = filesListedBetweenQuery(t.ctx.db, codename, 5, 8, 10).compile();
        const plan = await sql<{ detail: string }>`explain query plan ${sql.raw(compiled.sql.replace(/\?/g, 'NULL'))}`.execute(t.ctx.db);
        assert.match(plan.rows.map((r) => r.detail).join('\n'), /packages_listed/);
      }
    });
  });
}
