import assert from 'node:assert/strict';
import type { Severity } from '../../src/domain/security/types.js';
import { stat } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const finding = (cve: string, severity: Severity, rank: number) => ({ cve_id: cve, severity, severity_rank: rank, cvss_score: null, epss: null, in_kev: null, fix_state: 'not-fixed' as const, data: '{}' });

for (const backend of backends()) {
  describe(`dashboard (${backend})`, () => {
    let t: TestApp;
    let reader: string;
    let work: { dir: string; cleanup: () => Promise<void> };
    const sizes: number[] = [];

    const get = async (url: string, token = reader) => {
      const res = await t.app.inject({ method: 'GET', url, headers: bearer(token) });
      return { status: res.statusCode, body: res.json() as Record<string, any> };
    };
    /** An audit index entry written directly (negative seq: never in the way of the real chain). */
    let fakeSeq = 0;
    const pastEntry = (ms: number, action: string, result: string, detail: string | null = null) =>
      t.ctx.db.insertInto('audit_index').values({
        seq: --fakeSeq, timestamp: new Date(ms).toISOString().replace('Z', '+00:00'), action, username: 'someone', result,
        package: 'old', version: '1', detail, ip: null, hash: 'x'.repeat(64),
      }).execute();

    before(async () => {
      work = await makeTempDir('tollgate-dashboard-');
      t = await startTestApp({ backend });
      const admin = await t.tokenFor('admin');
      const maintainer = await t.tokenFor('maintainer', 'dash-maint');
      reader = await t.tokenFor('reader');
      const files: Array<[string, string]> = [
        [await buildDeb(work.dir, { name: 'dash-a', version: '1.0-1' }), 'jammy'],
        [await buildDeb(work.dir, { name: 'dash-b', version: '1.0-1' }), 'jammy'],
        [await buildDeb(work.dir, { name: 'dash-c', version: '1.0-1' }), 'jammy'],
        [await buildRpm(work.dir, { name: 'dash-rpm', version: '2.0', files: { '/usr/share/dash-rpm/a': 'a\n' }, noAutoReqProv: true }), 'rocky9'],
      ];
      for (const [path, distribution] of files) {
        sizes.push((await stat(path)).size);
        const form = await multipartBody({ distribution }, { path });
        const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
        assert.equal(res.statusCode, 201, res.body);
      }
      // dash-a also in noble: one more package row, no more storage.
      const promoted = await t.app.inject({
        method: 'POST', url: '/distributions/promote', headers: bearer(admin),
        payload: { name: 'dash-a', version: '1.0-1', from_distribution: 'jammy', to_distribution: 'noble' },
      });
      assert.equal(promoted.statusCode, 200, promoted.body);
      // dash-b and dash-c held for review (as a review policy would), dash-c with findings.
      // The service locks a distribution's row before its packages' (file lists read after admission
      // too); this raw update locks them the other way, so it waits for those first (a deadlock on PostgreSQL).
      await t.ctx.repo.fileLists.idle();
      await t.ctx.db.updateTable('packages').set({ status: 'pending_review', cve_status: 'pending_review' }).where('name', 'in', ['dash-b', 'dash-c']).execute();
      const c = await t.ctx.db.selectFrom('packages').select('id').where('name', '=', 'dash-c').executeTakeFirstOrThrow();
      await t.ctx.db.insertInto('package_findings').values([
        finding('CVE-2026-0001', 'critical', 5), finding('CVE-2026-0002', 'high', 4), finding('CVE-2026-0003', 'high', 4), finding('CVE-2026-0004', 'negligible', 1),
      ].map((f) => ({ ...f, package_id: c.id }))).execute();
      const decided = await t.app.inject({
        method: 'POST', url: '/security/packages/dash-b/1.0-1/decide', headers: bearer(admin),
        payload: { action: 'accept_risk', justification: 'not reachable in our use' },
      });
      assert.equal(decided.statusCode, 200, decided.body);
      const quarantined = await t.app.inject({
        method: 'POST', url: '/security/packages/dash-rpm/2.0-1/quarantine', headers: bearer(maintainer), payload: { reason: 'suspicious' },
      });
      assert.equal(quarantined.statusCode, 200, quarantined.body);
      // Older activity: three days ago and twelve days ago.
      await pastEntry(Date.now() - 3 * DAY_MS, 'UPLOAD', 'SUCCESS', 'distribution=jammy; status=published; sha256=00');
      await pastEntry(Date.now() - 3 * DAY_MS, 'UPLOAD', 'WARNING', 'distribution=jammy; status=quarantined; sha256=00');
      await pastEntry(Date.now() - 3 * DAY_MS, 'SECURITY_DECISION', 'SUCCESS', 'action=reject; justification=x; expiry=never');
      await pastEntry(Date.now() - 12 * DAY_MS, 'UPLOAD', 'FAILURE', 'distribution=jammy; status=rejected; sha256=00');
      await pastEntry(Date.now() - 12 * DAY_MS, 'LOGIN', 'SUCCESS');
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    it('GET /dashboard/stats: packages per distribution, status and format, storage counted once per file', async () => {
      const { status, body } = await get('/dashboard/stats');
      assert.equal(status, 200);
      assert.equal(body.packages_total, 5);
      assert.equal(body.stored_files, 4);
      assert.equal(body.storage_bytes, sizes.reduce((a, b) => a + b, 0));
      assert.deepEqual(
        Object.fromEntries(Object.entries(body.by_status).filter(([, n]) => n)),
        { published: 2, accepted_risk: 1, pending_review: 1, quarantined: 1 },
      );
      const dist = (codename: string) => body.by_distribution.find((d: any) => d.distribution === codename);
      assert.equal(dist('jammy').packages, 3);
      assert.equal(dist('jammy').format, 'deb');
      assert.equal(dist('jammy').by_status.pending_review, 1);
      assert.equal(dist('noble').packages, 1);
      assert.equal(dist('rocky9').by_status.quarantined, 1);
      assert.equal(dist('bookworm').packages, 0);
      assert.equal(body.by_distribution.length, 11);
      const format = (f: string) => body.by_format.find((x: any) => x.format === f);
      assert.deepEqual([format('deb').packages, format('deb').stored_files, format('deb').storage_bytes], [4, 3, sizes[0]! + sizes[1]! + sizes[2]!]);
      assert.deepEqual([format('rpm').packages, format('rpm').stored_files, format('rpm').storage_bytes], [1, 1, sizes[3]!]);
    });

    it('GET /dashboard/history: uploads, publications, reviews and quarantines per UTC day, zeros included', async () => {
      const { status, body } = await get('/dashboard/history?days=7');
      assert.equal(status, 200);
      assert.equal(body.days, 7);
      assert.equal(body.history.length, 7);
      assert.equal(body.to, dayOf(Date.now()));
      assert.equal(body.from, dayOf(Date.now() - 6 * DAY_MS));
      // Today: four uploads, all published at once; the accept_risk decision publishes dash-b
      // again and is a review; the explicit quarantine.
      assert.deepEqual(body.history.at(-1), { day: dayOf(Date.now()), uploads: 4, publications: 5, reviews: 1, quarantines: 1 });
      // Three days ago: an upload published, an upload quarantined, a reject decision.
      assert.deepEqual(body.history.find((d: any) => d.day === dayOf(Date.now() - 3 * DAY_MS)), {
        day: dayOf(Date.now() - 3 * DAY_MS), uploads: 2, publications: 1, reviews: 1, quarantines: 2,
      });
      assert.deepEqual(body.history.at(0), { day: body.from, uploads: 0, publications: 0, reviews: 0, quarantines: 0 });
      assert.deepEqual(body.totals, { uploads: 6, publications: 6, reviews: 2, quarantines: 3 });

      const month = await get('/dashboard/history');
      assert.equal(month.body.days, 30);
      assert.equal(month.body.history.length, 30);
      assert.equal(month.body.totals.uploads, 7);
    });

    it('GET /dashboard/history: days outside 1..365 answer 422 with the error body', async () => {
      for (const query of ['?days=0', '?days=366', '?days=abc', '?since=1']) {
        const { status, body } = await get(`/dashboard/history${query}`);
        assert.equal(status, 422, query);
        assert.equal(typeof body.detail, 'string');
        assert.match(body.code, /^[a-z][a-z0-9_]*$/);
      }
      assert.equal((await get('/dashboard/history?days=365')).body.history.length, 365);
    });

    it('GET /dashboard/summary: package count, pending reviews, findings by severity, recent activity', async () => {
      const { status, body } = await get('/dashboard/summary');
      assert.equal(status, 200);
      assert.equal(body.packages_total, 5);
      assert.equal(body.pending_reviews, 1);
      assert.deepEqual(body.pending_by_status, { pending_review: 1, upgrade_required: 0 });
      assert.deepEqual(body.findings, { critical: 1, high: 2, medium: 0, low: 0, negligible: 1 });
      assert.equal(body.findings_total, 4);
      const actions = body.recent_activity.map((e: any) => e.action);
      assert.ok(body.recent_activity.length <= 20);
      assert.equal(actions[0], 'QUARANTINE');
      assert.equal(actions[1], 'SECURITY_DECISION');
      assert.equal(body.recent_activity[0].user, 'dash-maint');
      assert.equal(body.recent_activity[0].package, 'dash-rpm');
      assert.match(body.recent_activity[0].timestamp, /\+00:00$/);
      const seqs = body.recent_activity.map((e: any) => e.seq);
      assert.deepEqual(seqs, [...seqs].sort((a: number, b: number) => b - a));
    });

    it('GET /dashboard/history: today is always current; ended days follow retention', async () => {
      const today = dayOf(Date.now());
      const threeDaysAgo = dayOf(Date.now() - 3 * DAY_MS);
      const before = await get('/dashboard/history?days=7');
      await t.ctx.audit.record({ action: 'QUARANTINE', user: 'dash-maint', result: 'SUCCESS', package: 'dash-a', version: '1.0-1', detail: 'test' });
      const after = await get('/dashboard/history?days=7');
      assert.equal(after.body.history.at(-1).quarantines, before.body.history.at(-1).quarantines + 1);
      assert.equal(after.body.history.find((d: any) => d.day === threeDaysAgo).uploads, 2);
      // Retention removes the oldest entries: the days they were in are counted again.
      await t.ctx.db.deleteFrom('audit_index').where('seq', '<', 0).execute();
      const trimmed = await get('/dashboard/history?days=7');
      assert.deepEqual(trimmed.body.history.find((d: any) => d.day === threeDaysAgo), { day: threeDaysAgo, uploads: 0, publications: 0, reviews: 0, quarantines: 0 });
      assert.equal(trimmed.body.history.at(-1).day, today);
      assert.equal(trimmed.body.totals.uploads, 4);
    });

    it('answers every role, and 401 without credentials', async () => {
      for (const role of ['admin', 'maintainer', 'uploader', 'auditor', 'reader'] as const) {
        const token = await t.tokenFor(role);
        for (const url of ['/dashboard/stats', '/dashboard/history', '/dashboard/summary', '/api/v1/dashboard/summary', '/downloads/stats']) {
          assert.equal((await get(url, token)).status, 200, `${role} ${url}`);
        }
      }
      const anon = await t.app.inject({ method: 'GET', url: '/dashboard/stats' });
      assert.equal(anon.statusCode, 401);
      assert.equal(typeof anon.json().detail, 'string');
    });
  });
}
