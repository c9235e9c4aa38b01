/**
 * The CVE scanner matches what a package embeds (issue 10): a deb carrying an npm module and a
 * Python distribution, OSV feeds with npm and PyPI advisories; at upload and on rescan the
 * findings name the embedded component's purl, and the SBOM's vulnerability points at it.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb, type DebSpec } from '../../harness/debs.js';
import { makeTempDir } from '../helpers/tmp.js';
import { patchSettings, startFeedServer, upload, writeOsvFeed, type FeedServer } from './support.js';

type Json = Record<string, any>;

const embedding = (name: string): DebSpec => ({
  name, version: '1.0-1',
  files: {
    [`usr/lib/${name}/node_modules/left-pad/package.json`]: JSON.stringify({ name: 'left-pad', version: '1.3.0' }),
    [`usr/lib/${name}/node_modules/chalk/package.json`]: JSON.stringify({ name: 'chalk', version: '5.0.0' }),
    'usr/lib/python3/dist-packages/requests-2.31.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: requests\nVersion: 2.31.0\n\n',
  },
});

for (const backend of backends()) {
  describe(`CVE scanner on embedded components (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    let work: { dir: string; cleanup: () => Promise<void> };
    let feeds: FeedServer;
    const get = async (url: string) => {
      const res = await t.app.inject({ method: 'GET', url, headers: bearer(admin) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as Json;
    };
    const deb = async (spec: DebSpec) => {
      const dir = join(work.dir, spec.name);
      await mkdir(dir, { recursive: true });
      const res = await upload(t, admin, await buildDeb(dir, spec), 'bookworm');
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as Json;
    };

    before(async () => {
      work = await makeTempDir('tollgate-embedded-cve-');
      t = await startTestApp({ backend });
      admin = await t.tokenFor('admin');
      // Uploaded before any feed was loaded: not scanned, found later by a rescan.
      assert.equal((await deb(embedding('early-app'))).status, 'published');
      await writeOsvFeed(join(work.dir, 'osv.json'), [
        { id: 'GHSA-lp', ecosystem: 'npm', pkg: 'left-pad', cves: ['CVE-2026-7001'], fixed: '1.3.1', severity: 'critical' },
        { id: 'GHSA-ch', ecosystem: 'npm', pkg: 'chalk', cves: ['CVE-2026-7002'], introduced: '5.1.0', severity: 'high' },
        // PyPI advisories may spell the project as published: matched after PEP 503 normalisation.
        { id: 'PYSEC-rq', ecosystem: 'PyPI', pkg: 'Requests', cves: ['CVE-2026-7003'], introduced: '2.0.0', fixed: '2.32.0', severity: 'medium' },
        { id: 'DSA-0001-1', ecosystem: 'Debian:12', pkg: 'unrelated', cves: ['CVE-2026-7004'], fixed: '2.0-1', severity: 'low' },
      ]);
      feeds = await startFeedServer(work.dir);
      await patchSettings(t, admin, { vuln_feeds: [{ name: 'test', url: feeds.url('osv.json'), format: 'osv' }] });
      const sync = await t.app.inject({ method: 'POST', url: '/import/sync-security', headers: bearer(admin) });
      assert.equal(sync.statusCode, 200, sync.body);
    });
    after(async () => {
      await feeds?.close();
      await t?.close();
      await work?.cleanup();
    });

    it('reports the vulnerable embedded components at upload, naming each by purl', async () => {
      const res = await deb(embedding('late-app'));
      assert.notEqual(res.status, 'published', JSON.stringify(res));
      const cve = await get('/security/packages/late-app/1.0-1/cve');
      const findings = (cve.findings as Json[]).map((f) => [f.cve_id, f.affected_component, f.installed_version, f.fixed_version]);
      assert.deepEqual(findings, [
        ['CVE-2026-7001', 'pkg:npm/left-pad@1.3.0', '1.3.0', '1.3.1'],
        ['CVE-2026-7003', 'pkg:pypi/requests@2.31.0', '2.31.0', '2.32.0'],
      ]);
    });

    it('finds them on rescan for a package uploaded before the feeds', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/security/packages/early-app/1.0-1/rescan', headers: bearer(admin) });
      assert.equal(res.statusCode, 200, res.body);
      const cve = await get('/security/packages/early-app/1.0-1/cve');
      assert.deepEqual((cve.findings as Json[]).map((f) => f.affected_component).sort(), ['pkg:npm/left-pad@1.3.0', 'pkg:pypi/requests@2.31.0']);
    });

    it('points the SBOM vulnerability at the embedded component', async () => {
      const bom = await get('/sbom/late-app/1.0-1');
      const v = (bom.vulnerabilities as Json[]).find((x) => x.id === 'CVE-2026-7001')!;
      assert.ok(String(v.affects[0].ref).endsWith('|pkg:npm/left-pad@1.3.0'), v.affects[0].ref);
    });
  });
}
