/**
 * POST /import/sync-security against a local feed server (http, conditional requests) and a
 * file:// feed, on both database backends: tables loaded, 304 reuse, failures isolated, removed
 * feeds dropped, health `grype`, the db-age metric, audit SYNC, permissions.
 */
import assert from 'node:assert/strict';
import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { FEED_UNAVAILABLE } from '../../src/adapters/feeds/fetch.js';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildRpm } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';
import { patchSettings, startFeedServer, upload, writeEpss, writeKev, writeOsvFeed, type FeedServer } from './support.js';

for (const backend of backends()) {
  describe(`security feed sync (${backend})`, () => {
    let app: TestApp;
    let admin: string;
    let tmp: { dir: string; cleanup: () => Promise<void> };
    let server: FeedServer;

    before(async () => {
      tmp = await makeTempDir('tollgate-feeds-');
      // file:// feeds are read only under FEEDS_DIR.
      app = await startTestApp({ backend, env: { FEEDS_DIR: tmp.dir } });
      admin = await app.tokenFor('admin');
      await writeOsvFeed(join(tmp.dir, 'rocky.json'), [
        { id: 'RLSA-2024:0001', ecosystem: 'Rocky Linux:9', pkg: 'openssl', cves: ['CVE-2024-0001'], fixed: '1:3.0.7-25.el9', severity: 'high' },
        { id: 'RLSA-2024:0002', ecosystem: 'Rocky Linux:9', pkg: 'curl', cves: ['CVE-2024-0002', 'CVE-2024-0003'], fixed: '7.76.1-30.el9', severity: 'medium' },
        { id: 'RLSA-2024:0003', ecosystem: 'Rocky Linux:9', pkg: 'gone', cves: ['CVE-2024-0004'], withdrawn: true },
      ]);
      await writeOsvFeed(join(tmp.dir, 'debian.json'), [{ id: 'DSA-5000-1', ecosystem: 'Debian:12', pkg: 'foo', cves: ['CVE-2024-1000'], fixed: '1.2-4' }]);
      await writeEpss(join(tmp.dir, 'epss.csv.gz'), { 'CVE-2024-0001': 0.42, 'CVE-2024-0002': 0.01 });
      await writeKev(join(tmp.dir, 'kev.json'), ['CVE-2024-0001']);
      server = await startFeedServer(tmp.dir);
    });

    after(async () => {
      await app.close();
      await server.close();
      await tmp.cleanup();
    });

    it('before any sync: grype not configured, uploads skip the CVE step, sync without feeds is 422', async () => {
      const health = (await app.app.inject({ method: 'GET', url: '/health' })).json() as { components: Record<string, Record<string, unknown>> };
      assert.equal(health.components.grype!.configured, false);
      assert.equal(health.components.grype!.ok, false);
      const rpm = await buildRpm(join(tmp.dir, 'pkgs'), { name: 'curl', version: '7.76.1', release: '26.el9', payloadCompression: 'gzip' });
      const res = await upload(app, admin, rpm, 'rocky9');
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json() as { status: string; pipeline: Record<string, string> };
      assert.equal(body.status, 'published');
      assert.equal(body.pipeline.cve_scan, 'skipped');
      const rescan = await app.app.inject({ method: 'POST', url: '/security/packages/curl/7.76.1-26.el9/rescan', headers: bearer(admin) });
      assert.equal(rescan.statusCode, 424);
      assert.equal(rescan.json().code, 'vulnerability_db_not_synced');
      const sync = await app.app.inject({ method: 'POST', url: '/import/sync-security', headers: bearer(admin) });
      assert.equal(sync.statusCode, 422);
      assert.equal(sync.json().code, 'no_feeds_configured');
    });

    it('only maintainers and admins may sync', async () => {
      for (const role of ['reader', 'uploader', 'auditor'] as const) {
        const res = await app.app.inject({ method: 'POST', url: '/import/sync-security', headers: bearer(await app.tokenFor(role)) });
        assert.equal(res.statusCode, 403, role);
      }
    });

    it('downloads every feed into the database, then reuses them with conditional requests', async () => {
      await patchSettings(app, admin, {
        vuln_feeds: [
          { name: 'rocky', url: server.url('rocky.json'), format: 'osv' },
          { name: 'debian', url: pathToFileURL(join(tmp.dir, 'debian.json')).href, format: 'osv' },
        ],
        epss_url: server.url('epss.csv.gz'),
        kev_url: server.url('kev.json'),
      });
      const maintainer = await app.tokenFor('maintainer');
      const res = await app.app.inject({ method: 'POST', url: '/import/sync-security', headers: bearer(maintainer) });
      assert.equal(res.statusCode, 200, res.body);
      const report = res.json() as { advisories: number; epss: number; kev: number; feeds: Array<{ name: string; status: string; records: number; rows: number }> };
      assert.equal(report.advisories, 3);
      assert.equal(report.epss, 2);
      assert.equal(report.kev, 1);
      assert.deepEqual(report.feeds.map((f) => [f.name, f.status]), [['rocky', 'updated'], ['debian', 'updated'], ['epss', 'updated'], ['kev', 'updated']]);
      assert.equal(report.feeds[0]!.records, 3);
      assert.equal(report.feeds[0]!.rows, 2);

      const again = (await app.app.inject({ method: 'POST', url: '/api/v1/import/sync-security', headers: bearer(maintainer) })).json() as typeof report;
      assert.deepEqual(again.feeds.map((f) => f.status), ['not_modified', 'not_modified', 'not_modified', 'not_modified']);
      assert.equal(again.advisories, 3);
      const conditional = server.requests.filter((r) => r.status === 304);
      assert.equal(conditional.length, 3, 'the three http feeds answered 304 to If-None-Match');

      const audit = (await app.app.inject({ method: 'GET', url: '/audit/logs?action=SYNC', headers: bearer(admin) })).json() as { items: Array<{ action: string; result: string; detail: string }> };
      assert.ok(audit.items.some((e) => e.action === 'SYNC' && e.result === 'SUCCESS' && e.detail.includes('rocky=updated')));
    });

    it('reports the database in health and metrics', async () => {
      const health = (await app.app.inject({ method: 'GET', url: '/health' })).json() as { components: Record<string, Record<string, unknown>> };
      const grype = health.components.grype!;
      assert.equal(grype.ok, true);
      assert.equal(grype.configured, true);
      assert.equal(grype.advisories, 3);
      assert.ok(typeof grype.db_age_hours === 'number' && grype.db_age_hours >= 0 && grype.db_age_hours < 1);
      const metrics = (await app.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, /^tollgate_grype_db_age_seconds \d+/m);
    });

    it('a failing feed keeps its old content while the others load; a removed feed is dropped', async () => {
      await writeOsvFeed(join(tmp.dir, 'rocky.json'), [{ id: 'RLSA-2024:0009', ecosystem: 'Rocky Linux:9', pkg: 'zlib', cves: ['CVE-2024-0009'], severity: 'low' }]);
      await rm(join(tmp.dir, 'debian.json'));
      const res = await app.app.inject({ method: 'POST', url: '/import/sync-security', headers: bearer(admin) });
      const report = res.json() as { advisories: number; feeds: Array<{ name: string; status: string; error_code: string | null }> };
      assert.equal(res.statusCode, 200);
      assert.deepEqual(report.feeds.map((f) => [f.name, f.status]), [['rocky', 'updated'], ['debian', 'failed'], ['epss', 'not_modified'], ['kev', 'not_modified']]);
      assert.equal(report.feeds[1]!.error_code, 'feed_fetch_failed');
      assert.equal(report.advisories, 2, 'rocky replaced by its one new row; debian kept');

      await patchSettings(app, admin, { vuln_feeds: [{ name: 'rocky', url: server.url('rocky.json'), format: 'osv' }], kev_url: null });
      const last = (await app.app.inject({ method: 'POST', url: '/import/sync-security', headers: bearer(admin) })).json() as { advisories: number; kev: number };
      assert.equal(last.advisories, 1);
      assert.equal(last.kev, 0);
    });

    it('file:// feeds: refused outside FEEDS_DIR by name (422), by real path at sync (one generic message)', async () => {
      const patch = (payload: Record<string, unknown>) => app.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload });
      for (const [payload, loc] of [
        [{ vuln_feeds: [{ name: 'passwd', url: 'file:///etc/passwd', format: 'osv' }] }, ['body', 'vuln_feeds', '0', 'url']],
        [{ epss_url: `file://${tmp.dir}/../escape.csv` }, ['body', 'epss_url']],
        [{ kev_url: 'file:///etc/shadow' }, ['body', 'kev_url']],
      ] as const) {
        const res = await patch(payload);
        assert.equal(res.statusCode, 422, JSON.stringify(payload));
        assert.deepEqual(res.json().errors[0].loc, loc);
      }
      // A link inside FEEDS_DIR passes the check by name; the sync resolves it and refuses.
      await symlink('/etc/passwd', join(tmp.dir, 'link-out.json'));
      const ok = await patch({ vuln_feeds: [
        { name: 'link', url: pathToFileURL(join(tmp.dir, 'link-out.json')).href, format: 'osv' },
        { name: 'missing', url: pathToFileURL(join(tmp.dir, 'no-such.json')).href, format: 'osv' },
        { name: 'closed', url: 'http://127.0.0.1:1/feed.json', format: 'osv' },
      ] });
      assert.equal(ok.statusCode, 200, ok.body);
      const report = (await app.app.inject({ method: 'POST', url: '/import/sync-security', headers: bearer(admin) })).json() as { feeds: Array<{ name: string; status: string; error: string; error_code: string }> };
      assert.deepEqual(report.feeds.slice(0, 3).map((f) => [f.name, f.status, f.error_code, f.error]), [
        ['link', 'failed', 'feed_fetch_failed', FEED_UNAVAILABLE],
        ['missing', 'failed', 'feed_fetch_failed', FEED_UNAVAILABLE],
        ['closed', 'failed', 'feed_fetch_failed', FEED_UNAVAILABLE],
      ]);
      const states = await app.ctx.db.selectFrom('vuln_feed_state').select(['name', 'last_error']).where('name', 'in', ['link', 'missing', 'closed']).execute();
      assert.ok(states.every((s) => s.last_error === FEED_UNAVAILABLE), JSON.stringify(states));
      await rm(join(tmp.dir, 'link-out.json'));
    });

    it('a feed larger than allowed or malformed fails cleanly', async () => {
      const { writeFile } = await import('node:fs/promises');
      await writeFile(join(tmp.dir, 'bad.json'), 'this is not json');
      await patchSettings(app, admin, { vuln_feeds: [{ name: 'rocky', url: server.url('rocky.json'), format: 'osv' }, { name: 'bad', url: server.url('bad.json'), format: 'osv' }] });
      const report = (await app.app.inject({ method: 'POST', url: '/import/sync-security', headers: bearer(admin) })).json() as { advisories: number; feeds: Array<{ name: string; status: string; error_code: string | null }> };
      assert.equal(report.feeds[1]!.status, 'failed');
      assert.equal(report.feeds[1]!.error_code, 'feed_malformed');
      assert.equal(report.advisories, 1);
    });
  });
}

describe('security feed sync without FEEDS_DIR', () => {
  it('refuses every file:// feed URL with 422', async () => {
    const app = await startTestApp();
    try {
      const admin = await app.tokenFor('admin');
      const res = await app.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload: { kev_url: 'file:///var/lib/tollgate/kev.json' } });
      assert.equal(res.statusCode, 422);
      assert.match(res.json().detail, /FEEDS_DIR/);
      const https = await app.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload: { kev_url: 'https://www.cisa.gov/kev.json' } });
      assert.equal(https.statusCode, 200, https.body);
    } finally {
      await app.close();
    }
  });
});
