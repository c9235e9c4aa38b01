import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readCatalogGeneration } from '../../src/adapters/db/catalog-generation.table.js';
import type { PackageRow } from '../../src/adapters/db/packages.table.js';
import { Catalog } from '../../src/services/packages/catalog.js';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';

/** A stored finding with the given KEV flag and EPSS. */
const finding = (f: { cve_id: string; epss: number; in_kev: boolean }) => ({
  ...f, advisory_id: f.cve_id, severity: 'high', severity_source: 'nvd', cvss_score: 7, cvss_vector: null, epss_percentile: null,
  affected_component: 'x', installed_version: '1.0-1', fixed_version: '1.0-2', fix_state: 'fixed', summary: '', action: 'review',
});

/** A stored row as an upload would leave it (only what the listings read matters here). */
function row(id: string, name: string, distribution: string, status: string, findings: Array<{ cve_id: string; epss: number; in_kev: boolean }> = []): PackageRow {
  const version = '1.0-1';
  const filename = `${name}_${version}_amd64.deb`;
  const at = new Date(Date.UTC(2026, 10, 1)).toISOString();
  return {
    id, distribution, format: 'deb', name, version, arch: 'amd64', component: 'main', status, cve_status: findings.length > 0 ? 'findings' : 'no_findings',
    sha256: id.padEnd(64, '0').slice(0, 64), upload_sha256: id.padEnd(64, '0').slice(0, 64), upload_size: 0, signed_by: null, sha512: 'b'.repeat(128), sha1: 'c'.repeat(40), md5: 'd'.repeat(32), size: 100,
    filename, pool_path: `apt/pool/main/${name[0]}/${name}/${filename}-${distribution}`, source_name: name, source_version: version,
    metadata: '{}', index_entry: `Package: ${name}\n`, relations: '{}', files: '[]', pipeline: '[]',
    findings: JSON.stringify({ counts: {}, details: findings.map(finding) }),
    reasons: '[]', uploaded_by: 'test', sla_deadline: null, seq: 0, created_at: at, updated_at: at,
  } as unknown as PackageRow;
}

for (const backend of backends()) {
  describe(`listing totals and the review order follow every write (catalog generation, ${backend})`, () => {
    let t: TestApp;
    let token: string;
    const get = async (url: string) => {
      const res = await t.app.inject({ method: 'GET', url, headers: bearer(token) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { total: number; items: Array<{ name: string }> };
    };

    before(async () => {
      t = await startTestApp({ backend });
      token = await t.tokenFor('admin');
      await t.ctx.db.insertInto('packages').values([
        row('g1', 'gen-alpha', 'jammy', 'published'),
        row('g2', 'gen-alpha', 'noble', 'published'),
        row('g3', 'gen-beta', 'jammy', 'pending_review', [{ cve_id: 'CVE-2026-1', epss: 0.1, in_kev: false }]),
      ]).execute();
    });
    after(async () => t.close());

    it('a committed insert, status change, findings change and delete each raise the generation', async () => {
      const db = t.ctx.db;
      const g0 = await readCatalogGeneration(db);
      await db.insertInto('packages').values(row('g4', 'gen-gamma', 'jammy', 'published')).execute();
      const g1 = await readCatalogGeneration(db);
      assert.ok(g1 > g0, `${g1} > ${g0}`);
      await db.updateTable('packages').set({ status: 'quarantined' }).where('id', '=', 'g4').execute();
      const g2 = await readCatalogGeneration(db);
      assert.ok(g2 > g1);
      await db.updateTable('packages').set({ findings: '{"counts":{},"details":[]}' }).where('id', '=', 'g4').execute();
      const g3 = await readCatalogGeneration(db);
      assert.ok(g3 > g2);
      await db.deleteFrom('packages').where('id', '=', 'g4').execute();
      assert.ok((await readCatalogGeneration(db)) > g3);
    });

    it('a rolled-back write leaves it; a change to a column no listing shows does not raise it', async () => {
      const db = t.ctx.db;
      const g0 = await readCatalogGeneration(db);
      await assert.rejects(db.transaction().execute(async (trx) => {
        await trx.insertInto('packages').values(row('g5', 'gen-rolled', 'jammy', 'published')).execute();
        throw new Error('roll back');
      }), /roll back/);
      assert.equal(await readCatalogGeneration(db), g0);
      await db.updateTable('packages').set({ files: '["/usr/bin/x"]', listed_generation: 3 }).where('id', '=', 'g1').execute();
      await db.updateTable('packages').set({ metadata: '{"x":1}', relations: '{}' }).where('id', '=', 'g1').execute();
      assert.equal(await readCatalogGeneration(db), g0);
    });

    it('a transaction with many writes raises it once it commits, not before', async () => {
      const db = t.ctx.db;
      const g0 = await readCatalogGeneration(db);
      let inside = -1;
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 5; i++) await trx.insertInto('packages').values(row(`gm${i}`, `gen-many-${i}`, 'jammy', 'published')).execute();
        await trx.deleteFrom('packages').where('id', 'like', 'gm%').execute();
        // SQLite has one connection: reading outside the transaction would wait for it.
        if (backend === 'postgres') inside = await readCatalogGeneration(db);
      });
      if (backend === 'postgres') {
        assert.equal(inside, g0);
        assert.equal(await readCatalogGeneration(db), g0 + 1);
      } else {
        assert.ok((await readCatalogGeneration(db)) > g0);
      }
    });

    it('/artifacts, /packages?q= and the review queue answer the new totals and order after each write, including one another process made', async () => {
      const db = t.ctx.db;
      const names = async () => (await get('/artifacts?per_page=1')).total;
      const search = async () => (await get('/packages?q=gen-&per_page=1')).total;
      const queue = async () => (await get('/security/review-queue')).items.map((i) => i.name);
      const before = { names: await names(), search: await search(), queue: await queue() };
      assert.deepEqual(before.queue, ['gen-beta']);
      // Twice: the second answer comes from the kept values and must be the same.
      assert.equal(await names(), before.names);
      assert.equal(await search(), before.search);

      // Written straight to the database, as another replica would: this process's caches learn of it from the generation.
      await db.insertInto('packages').values([
        row('g6', 'gen-delta', 'jammy', 'upgrade_required', [{ cve_id: 'CVE-2026-2', epss: 0.9, in_kev: true }]),
        row('g7', 'gen-alpha', 'bookworm', 'published'),
      ]).execute();
      assert.equal(await names(), before.names + 1, 'a new name counts once; a new distribution of a known name does not');
      assert.equal(await search(), before.search + 2);
      assert.deepEqual(await queue(), ['gen-delta', 'gen-beta'], 'KEV first');

      await db.updateTable('packages').set({ findings: JSON.stringify({ counts: {}, details: [finding({ cve_id: 'CVE-2026-3', epss: 0.5, in_kev: true })] }) }).where('id', '=', 'g3').execute();
      await db.updateTable('packages').set({ findings: '{"counts":{},"details":[]}' }).where('id', '=', 'g6').execute();
      assert.deepEqual(await queue(), ['gen-beta', 'gen-delta'], 'the order follows a findings change');

      await db.updateTable('packages').set({ status: 'accepted_risk' }).where('id', '=', 'g3').execute();
      assert.deepEqual(await queue(), ['gen-delta'], 'a decided package leaves the queue');
      assert.equal((await get('/security/review-queue')).total, 1);

      await db.deleteFrom('packages').where('name', '=', 'gen-delta').execute();
      assert.equal(await names(), before.names);
      assert.equal(await search(), before.search + 1);
      assert.deepEqual(await queue(), []);
    });

    it('kept pages follow a change to any column they show and to a decision record, made by another process', async () => {
      const db = t.ctx.db;
      const versions = async () => (await get('/artifacts?per_page=100')).items.find((i) => i.name === 'gen-alpha') as unknown as { versions: Array<{ distribution: string; cve_status: string }> };
      const searched = async () => (await get('/packages?q=gen-alpha&per_page=100')).items as unknown as Array<{ id: string; reasons: string[]; sha256: string }>;
      assert.equal((await versions()).versions.find((v) => v.distribution === 'jammy')?.cve_status, 'no_findings');
      await db.updateTable('packages').set({ cve_status: 'not_scanned' }).where('id', '=', 'g1').execute();
      assert.equal((await versions()).versions.find((v) => v.distribution === 'jammy')?.cve_status, 'not_scanned', 'a CVE status change alone');
      // Pages of more than 100 rows are computed each time, not kept: the same answer.
      const largeList = (await get('/artifacts?per_page=1000')).items.find((i) => i.name === 'gen-alpha') as unknown as { versions: Array<{ distribution: string; cve_status: string }> };
      assert.deepEqual(largeList.versions, (await versions()).versions);

      await searched();
      await db.updateTable('packages').set({ reasons: '["held by hand"]' }).where('id', '=', 'g1').execute();
      assert.deepEqual((await searched()).find((p) => p.id === 'g1')?.reasons, ['held by hand'], 'the reasons alone');
      await db.updateTable('packages').set({ sha256: 'e'.repeat(64) }).where('id', '=', 'g1').execute();
      assert.equal((await searched()).find((p) => p.id === 'g1')?.sha256, 'e'.repeat(64), 'a re-signed file');

      const artifact = async () => (await get('/artifacts/gen-alpha')) as unknown as { versions: unknown[]; last_validation: { steps: Array<{ name: string }> } };
      assert.deepEqual((await artifact()).last_validation.steps, []);
      await db.updateTable('packages').set({ pipeline: '[{"name":"format","status":"passed","message":"","value":""}]' }).where('name', '=', 'gen-alpha').execute();
      assert.equal((await artifact()).last_validation.steps[0]?.name, 'format', 'the validation record alone');
      const versionsBefore = (await artifact()).versions.length;
      await db.insertInto('packages').values({ ...row('g11', 'gen-alpha', 'jammy', 'published'), version: '2.0-1', filename: 'gen-alpha_2.0-1_amd64.deb', pool_path: 'apt/pool/main/g/gen-alpha/gen-alpha_2.0-1_amd64.deb' }).execute();
      assert.equal((await artifact()).versions.length, versionsBefore + 1, 'a new version of the package');
      await db.deleteFrom('packages').where('name', '=', 'gen-iota').execute();
      assert.equal((await t.app.inject({ method: 'GET', url: '/artifacts/gen-iota', headers: bearer(token) })).statusCode, 404);
      await db.insertInto('packages').values(row('g12', 'gen-iota', 'jammy', 'published')).execute();
      assert.equal((await t.app.inject({ method: 'GET', url: '/artifacts/gen-iota', headers: bearer(token) })).statusCode, 200, 'an unknown package, then stored');
      await db.deleteFrom('packages').where('id', 'in', ['g11', 'g12']).execute();

      await db.insertInto('packages').values(row('g9', 'gen-zeta', 'jammy', 'upgrade_required')).execute();
      const decisionOfZeta = async () => ((await get('/security/review-queue?per_page=100')).items.find((i) => i.name === 'gen-zeta') as unknown as { decision: { target_version: string } | null }).decision;
      assert.equal(await decisionOfZeta(), null);
      const decision = {
        name: 'gen-zeta', version: '1.0-1', arch: 'amd64', action: 'upgrade_required' as const, justification: 'fix first', expires_at: null,
        target_version: '1.0-2', cve_ids: '[]', covered_cve_ids: '[]', decided_by: 'admin', decided_at: new Date().toISOString(),
      };
      await db.insertInto('security_decisions').values(decision).execute();
      assert.equal((await decisionOfZeta())?.target_version, '1.0-2', 'a decision record written');
      await db.updateTable('security_decisions').set({ target_version: '1.0-3' }).where('name', '=', 'gen-zeta').execute();
      assert.equal((await decisionOfZeta())?.target_version, '1.0-3', 'a decision record replaced');
      const largeQueue = (await get('/security/review-queue?per_page=1000')).items.find((i) => i.name === 'gen-zeta') as unknown as { decision: { target_version: string } };
      assert.equal(largeQueue.decision.target_version, '1.0-3', 'a page of more than 100 rows (not kept)');
      await db.deleteFrom('security_decisions').where('name', '=', 'gen-zeta').execute();
      await db.deleteFrom('packages').where('id', '=', 'g9').execute();
    });

    it("a kept review page answers the days remaining of the moment asked about", async () => {
      const db = t.ctx.db;
      const deadline = Date.UTC(2026, 11, 10, 12);
      await db.insertInto('packages').values({ ...row('g10', 'gen-eta', 'jammy', 'pending_review'), sla_deadline: new Date(deadline).toISOString() }).execute();
      const remaining = async (at: number) => {
        const { items } = await t.ctx.security.queries.reviewQueue({}, { page: 1, perPage: 100 }, new Date(at));
        const entry = items.find((i) => i.name === 'gen-eta')!;
        return [(entry.sla_remaining_days ?? NaN) + 0, entry.overdue]; // + 0: -0 (JSON 0) compares as 0
      };
      const day = 86_400_000;
      assert.deepEqual(await remaining(deadline - 2.5 * day), [3, false]);
      assert.deepEqual(await remaining(deadline - 2.1 * day), [3, false]);
      assert.deepEqual(await remaining(deadline - 1.9 * day), [2, false], 'a day boundary crossed');
      assert.deepEqual(await remaining(deadline - 2.5 * day), [3, false], 'an earlier moment than the kept one');
      assert.deepEqual(await remaining(deadline + 0.5 * day), [0, false]);
      assert.deepEqual(await remaining(deadline + 1.5 * day), [-1, true]);
      await db.deleteFrom('packages').where('id', '=', 'g10').execute();
    });

    it('two catalogs (two replicas) on one database agree after a write through either', async () => {
      const a = new Catalog(t.ctx.db);
      const b = new Catalog(t.ctx.db);
      const page = { page: 1, perPage: 10 };
      const n = (await a.artifacts(page)).total;
      assert.equal((await b.artifacts(page)).total, n);
      await t.ctx.db.insertInto('packages').values(row('g8', 'gen-epsilon', 'noble', 'published')).execute();
      assert.equal((await a.artifacts(page)).total, n + 1);
      assert.equal((await b.artifacts(page)).total, n + 1);
      assert.equal((await b.packages({ q: 'EPSILON' }, page)).total, 1);
    });
  });
}
