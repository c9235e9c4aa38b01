import assert from 'node:assert/strict';
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb, type DebSpec } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm, type RpmSpec } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';

const exists = (path: string) => access(path).then(() => true, () => false);
const relations = (missing: Array<{ relation: string }>) => missing.map((m) => m.relation).sort();

for (const backend of backends()) {
  describe(`artifacts and packages endpoints (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    let reader: string;
    let work: { dir: string; cleanup: () => Promise<void> };

    const get = (url: string, token = reader) => t.app.inject({ method: 'GET', url, headers: bearer(token) });
    const uploadFile = async (path: string, distribution: string) => {
      const form = await multipartBody({ distribution }, { path });
      const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().status, 'published', res.body);
      return res.json();
    };
    const deb = async (spec: DebSpec, distribution = 'jammy') => {
      const dir = join(work.dir, `${spec.name}-${spec.version}`.replace(/:/g, '_'));
      await mkdir(dir, { recursive: true });
      return uploadFile(await buildDeb(dir, spec), distribution);
    };
    const rpm = async (spec: RpmSpec, distribution = 'rocky9') => uploadFile(await buildRpm(work.dir, { noAutoReqProv: true, ...spec }), distribution);

    before(async () => {
      work = await makeTempDir('tollgate-artifacts-');
      t = await startTestApp({ backend });
      admin = await t.tokenFor('admin');
      reader = await t.tokenFor('reader');
      await deb({ name: 'dep-base', version: '1.0-1', multiArch: 'allowed', provides: 'virtual-thing' });
      await deb({ name: 'dep-base', version: '2.0-1', multiArch: 'allowed', provides: 'virtual-thing' });
      await deb({ name: 'dep-plain', version: '1.0', arch: 'all' });
      await deb({ name: 'dep-ok', version: '1.0', depends: 'nonexistent-x | dep-plain, dep-base (>= 2.0), dep-base:any, virtual-thing' });
      await deb({ name: 'dep-app', version: '1:1.0~rc1-1', depends: 'dep-base (<< 1.5), dep-plain (>> 5.0), dep-plain:any, nonexistent-y | nonexistent-z, virtual-other', preDepends: 'dep-base:any' });
      await rpm({ name: 'fake-sh', version: '1.0', files: { '/bin/sh': { content: '#!/bin/true\n', mode: 0o755 } } });
      await rpm({ name: 'rpm-lib', version: '2.1', arch: 'noarch', provides: ['libthing = 2.1'], files: { '/usr/share/rpm-lib/x': 'x\n' } });
      await rpm({ name: 'rpm-app', version: '1.0', epoch: 2, requires: ['/bin/sh', 'libthing >= 2', 'rpm-lib < 3'], files: { '/usr/share/rpm-app/x': 'x\n' } });
      await rpm({ name: 'rpm-needy', version: '1.0', requires: ['/usr/bin/python3', 'libthing >= 3', 'rpm-missing'], files: { '/usr/share/rpm-needy/x': 'x\n' } });
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    describe('GET /artifacts', () => {
      it('returns the pagination envelope with every package name once', async () => {
        const res = await get('/artifacts');
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        assert.deepEqual(Object.keys(body).sort(), ['items', 'page', 'pages', 'per_page', 'total']);
        assert.equal(body.total, 8);
        assert.equal(body.page, 1);
        assert.equal(body.per_page, 100);
        assert.equal(body.pages, 1);
        assert.deepEqual(body.items.map((i: { name: string }) => i.name), ['dep-app', 'dep-base', 'dep-ok', 'dep-plain', 'fake-sh', 'rpm-app', 'rpm-lib', 'rpm-needy']);
        const page = (await get('/api/artifacts/?page=2&per_page=3')).json();
        assert.equal(page.total, 8);
        assert.equal(page.pages, 3);
        assert.equal(page.per_page, 3);
        assert.deepEqual(page.items.map((i: { name: string }) => i.name), ['dep-plain', 'fake-sh', 'rpm-app']);
        assert.deepEqual((await get('/artifacts?page=9&per_page=3')).json().items, []);
        assert.equal((await get('/artifacts?per_page=1001')).statusCode, 422);
        assert.equal((await get('/artifacts?page=0')).statusCode, 422);
        const jammy = (await get('/artifacts?distribution=rocky9')).json();
        assert.deepEqual(jammy.items.map((i: { name: string }) => i.name), ['fake-sh', 'rpm-app', 'rpm-lib', 'rpm-needy']);
      });

      it('carries the version history and security status of each package', async () => {
        const base = (await get('/artifacts')).json().items.find((i: { name: string }) => i.name === 'dep-base');
        assert.equal(base.latest_version, '2.0-1');
        assert.equal(base.format, 'deb');
        assert.equal(base.security_status, 'published');
        assert.deepEqual(base.distributions, ['jammy']);
        assert.deepEqual(base.versions.map((v: { version: string; status: string; arch: string }) => [v.version, v.arch, v.status]), [
          ['1.0-1', 'amd64', 'published'],
          ['2.0-1', 'amd64', 'published'],
        ]);
        for (const v of base.versions) assert.match(v.uploaded_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$/);
      });
    });

    describe('GET /artifacts/{name} and /artifacts/{name}/{version}', () => {
      it('gives all versions, the last validation and the CVE findings', async () => {
        const res = await get('/artifacts/dep-base');
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        assert.equal(body.name, 'dep-base');
        assert.deepEqual(body.versions.map((v: { version: string }) => v.version), ['1.0-1', '2.0-1']);
        for (const v of body.versions) {
          assert.match(v.sha256, /^[0-9a-f]{64}$/);
          assert.equal(v.distribution, 'jammy');
          assert.match(v.pool_path, /^apt\/pool\/main\/d\/dep-base\/dep-base_\d\.0-1_amd64\.deb$/);
        }
        assert.equal(body.last_validation.version, '2.0-1');
        assert.equal(body.last_validation.status, 'published');
        assert.deepEqual(body.last_validation.steps.map((s: { name: string }) => s.name), ['format', 'provenance', 'antivirus', 'cve', 'signature', 'dependencies']);
        assert.deepEqual(body.cve_findings, []);
      });

      it('gives one version, with epochs and tildes in the path', async () => {
        const res = await get(`/artifacts/dep-app/${encodeURIComponent('1:1.0~rc1-1')}`);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().version, '1:1.0~rc1-1');
        assert.equal(res.json().items.length, 1);
        assert.equal(res.json().items[0].filename, 'dep-app_1.0~rc1-1_amd64.deb');
        const raw = await get('/artifacts/rpm-app/2:1.0-1');
        assert.equal(raw.statusCode, 200, raw.body);
        assert.equal(raw.json().items[0].arch, 'x86_64');
        assert.equal((await get('/artifacts/dep-base/2.0-1?distribution=jammy&arch=amd64')).json().items.length, 1);
        // API.md "one version's information": the version's own fields at the top level.
        const one = (await get('/artifacts/dep-base/2.0-1')).json();
        assert.equal(one.name, 'dep-base');
        assert.equal(one.version, '2.0-1');
        assert.equal(one.status, 'published');
        assert.equal(one.arch, 'amd64');
        assert.equal(one.distribution, 'jammy');
        assert.equal(one.cve_status, 'not_scanned', 'no vulnerability database is configured here');
        assert.deepEqual(one.cve_results, []);
        assert.match(one.sha256, /^[0-9a-f]{64}$/);
        assert.deepEqual(one.steps.map((s: { name: string }) => s.name), ['format', 'provenance', 'antivirus', 'cve', 'signature', 'dependencies']);
        assert.equal(one.items[0].status, 'published');
        assert.equal(raw.json().distribution, 'rocky9');
        assert.equal((await get('/artifacts/dep-base/2.0-1?distribution=noble')).statusCode, 404);
      });

      it('takes the highest version as the latest, not the last uploaded (dpkg and rpm ordering)', async () => {
        await deb({ name: 'order-pkg', version: '1.10-1' }, 'noble');
        await deb({ name: 'order-pkg', version: '1.9-1' }, 'noble');
        await rpm({ name: 'order-rpm', version: '1.10', files: { '/usr/share/order-rpm/a': '10' } }, 'rocky8');
        await rpm({ name: 'order-rpm', version: '1.9', files: { '/usr/share/order-rpm/a': '9' } }, 'rocky8');
        const detail = (await get('/artifacts/order-pkg')).json();
        assert.equal(detail.latest_version, '1.10-1');
        assert.deepEqual(detail.versions.map((v: { version: string }) => v.version), ['1.10-1', '1.9-1'], 'history in upload order');
        assert.equal(detail.last_validation.version, '1.10-1');
        const listed = (await get('/artifacts?distribution=noble')).json().items.find((i: { name: string }) => i.name === 'order-pkg');
        assert.equal(listed.latest_version, '1.10-1');
        assert.equal((await get('/artifacts/order-pkg/install')).json().commands.at(-1), 'sudo apt-get install order-pkg=1.10-1');
        assert.equal((await get('/artifacts/order-pkg/dependencies')).json().version, '1.10-1');
        assert.equal((await get('/artifacts/order-rpm')).json().latest_version, '1.10-1');
        assert.match((await get('/artifacts/order-rpm/install')).json().commands.at(-1), /order-rpm-1\.10-1\.x86_64$/);
        for (const name of ['order-pkg', 'order-rpm']) await t.app.inject({ method: 'DELETE', url: `/artifacts/${name}`, headers: bearer(admin) });
      });

      it('answers 404 with the error body for unknown names and versions', async () => {
        for (const url of ['/artifacts/nope', '/artifacts/nope/1.0', '/artifacts/dep-base/9.9', '/artifacts/nope/dependencies', '/artifacts/nope/install']) {
          const res = await get(url);
          assert.equal(res.statusCode, 404, url);
          assert.equal(res.json().code, 'package_not_found', url);
          assert.equal(typeof res.json().detail, 'string');
        }
        const del = await t.app.inject({ method: 'DELETE', url: '/artifacts/nope', headers: bearer(admin) });
        assert.equal(del.statusCode, 404);
      });
    });

    describe('GET /artifacts/{name}/dependencies', () => {
      it('resolves alternatives, version relations, :any and virtual packages (deb)', async () => {
        const ok = (await get('/artifacts/dep-ok/dependencies')).json();
        assert.deepEqual(ok, { name: 'dep-ok', version: '1.0', distribution: 'jammy', all_satisfied: true, install_blocked: false, missing: [] });
        const app = await get('/artifacts/dep-app/dependencies');
        assert.equal(app.statusCode, 200, app.body);
        const body = app.json();
        assert.equal(body.all_satisfied, false);
        assert.equal(body.install_blocked, true);
        // dep-base (<< 1.5) holds through 1.0-1; dep-base:any holds (Multi-Arch: allowed)
        assert.deepEqual(relations(body.missing), ['dep-plain (>> 5.0)', 'dep-plain:any', 'nonexistent-y | nonexistent-z', 'virtual-other']);
        for (const m of body.missing) assert.ok(m.reason.length > 0);
      });

      it('resolves RPM requires through provides, versions and file provides', async () => {
        const app = await get('/artifacts/rpm-app/dependencies');
        assert.equal(app.statusCode, 200, app.body);
        assert.equal(app.json().all_satisfied, true, app.body);
        assert.deepEqual(app.json().missing, []);
        const needy = (await get('/artifacts/rpm-needy/dependencies')).json();
        assert.equal(needy.all_satisfied, false);
        assert.equal(needy.install_blocked, true);
        const missing = relations(needy.missing);
        assert.equal(missing.length, 3, JSON.stringify(missing));
        assert.ok(missing.some((r) => r.includes('/usr/bin/python3')));
        assert.ok(missing.some((r) => /libthing >= 3/.test(r)));
        assert.ok(missing.some((r) => r.includes('rpm-missing')));
      });

      it('follows what the distribution publishes: a deleted provider makes the dependency missing', async () => {
        await deb({ name: 'dep-tmp-provider', version: '1.0', provides: 'tmp-virtual (= 1.0)' }, 'noble');
        await deb({ name: 'dep-tmp-user', version: '1.0', depends: 'tmp-virtual (>= 1.0)' }, 'noble');
        assert.equal((await get('/artifacts/dep-tmp-user/dependencies')).json().all_satisfied, true);
        const del = await t.app.inject({ method: 'DELETE', url: '/artifacts/dep-tmp-provider', headers: bearer(admin) });
        assert.equal(del.statusCode, 200);
        const after = (await get('/artifacts/dep-tmp-user/dependencies')).json();
        assert.equal(after.all_satisfied, false);
        assert.deepEqual(relations(after.missing), ['tmp-virtual (>= 1.0)']);
        await t.app.inject({ method: 'DELETE', url: '/artifacts/dep-tmp-user', headers: bearer(admin) });
      });
    });

    describe('GET /artifacts/{name}/install', () => {
      it('gives the APT source line with signed-by and a key URL the service serves', async () => {
        const res = await get('/artifacts/dep-ok/install');
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        assert.equal(body.format, 'deb');
        assert.match(body.source_line, /^deb \[signed-by=\/usr\/share\/keyrings\/tollgate\.gpg\] \S+\/repo\/apt jammy main$/);
        assert.match(body.key_url, /\/repo\/keys\/tollgate\.gpg$/);
        assert.equal(body.commands.at(-1), 'sudo apt-get install dep-ok=1.0');
        const key = await t.app.inject({ method: 'GET', url: new URL(body.key_url).pathname });
        assert.equal(key.statusCode, 200);
        assert.equal(key.rawPayload[0]! & 0x80, 0x80, 'a binary OpenPGP key (for signed-by)');
        const release = await t.app.inject({ method: 'GET', url: `${new URL(body.source_line.split(' ')[2]).pathname}/dists/jammy/InRelease` });
        assert.equal(release.statusCode, 200);
      });

      it('gives an RPM .repo file with repo_gpgcheck=1 whose baseurl is served', async () => {
        const res = await get('/artifacts/rpm-app/install');
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        assert.equal(body.format, 'rpm');
        assert.match(body.repo_file, /^repo_gpgcheck=1$/m);
        assert.match(body.repo_file, /^gpgkey=\S+\/repo\/keys\/tollgate\.asc$/m);
        const baseurl = /^baseurl=(\S+)$/m.exec(body.repo_file)![1]!;
        assert.match(baseurl, /\/repo\/rpm\/rocky9\/x86_64\/$/);
        const repomd = await t.app.inject({ method: 'GET', url: `${new URL(baseurl).pathname}repodata/repomd.xml` });
        assert.equal(repomd.statusCode, 200);
        assert.match(body.commands.at(-1), /^sudo dnf install rpm-app-1\.0-1\.x86_64$/);
      });

      it('answers only for a version the index serves: 409 not_published for a withheld one, else the newest published', async () => {
        const maintainer = await t.tokenFor('maintainer');
        await deb({ name: 'held-pkg', version: '1.0-1' }, 'noble');
        await deb({ name: 'held-pkg', version: '1.1+really1.0-1' }, 'noble');
        await rpm({ name: 'held-rpm', version: '1.0', files: { '/usr/share/held-rpm/a': 'a\n' } }, 'rocky8');
        for (const [name, version] of [['held-pkg', '1.1+really1.0-1'], ['held-rpm', '1.0-1']] as const) {
          const q = await t.app.inject({ method: 'POST', url: `/security/packages/${name}/${encodeURIComponent(version)}/quarantine`, headers: bearer(maintainer), payload: { reason: 'test' } });
          assert.equal(q.statusCode, 200, q.body);
        }
        const withheld = await get(`/artifacts/held-pkg/install?version=${encodeURIComponent('1.1+really1.0-1')}`);
        assert.equal(withheld.statusCode, 409, withheld.body);
        assert.equal(withheld.json().code, 'not_published');
        assert.match(withheld.json().detail, /held-pkg 1\.1\+really1\.0-1 is not in a published index \(noble: quarantined\)/);
        // Unnamed version: the newest the index serves, not the newer quarantined one.
        assert.equal((await get('/artifacts/held-pkg/install')).json().commands.at(-1), 'sudo apt-get install held-pkg=1.0-1');
        const rpmHeld = await get('/artifacts/held-rpm/install');
        assert.equal(rpmHeld.statusCode, 409, rpmHeld.body);
        assert.equal(rpmHeld.json().code, 'not_published');
        for (const name of ['held-pkg', 'held-rpm']) await t.app.inject({ method: 'DELETE', url: `/artifacts/${name}`, headers: bearer(admin) });
      });
    });

    describe('GET /packages', () => {
      it('lists packages in raw pool format, filtered by name text and distribution', async () => {
        const res = await get('/packages?q=DEP-B&distribution=jammy');
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        assert.equal(body.total, 2);
        assert.deepEqual(body.items.map((i: { name: string; version: string }) => `${i.name}=${i.version}`), ['dep-base=1.0-1', 'dep-base=2.0-1']);
        const entry = body.items[0].index_entry as string;
        assert.match(entry, /^Package: dep-base$/m);
        assert.match(entry, /^Filename: pool\/main\/d\/dep-base\/dep-base_1\.0-1_amd64\.deb$/m);
        assert.match(entry, /^SHA256: [0-9a-f]{64}$/m);
        assert.equal((await get('/packages?q=dep-base&distribution=noble')).json().total, 0);
        assert.equal((await get('/packages?q=%25')).json().total, 0, 'LIKE wildcards are literal');
        assert.equal((await get('/packages?distribution=rocky9')).json().total, 4);
        const all = (await get('/api/v1/packages/?per_page=2')).json();
        assert.equal(all.per_page, 2);
        assert.equal(all.items.length, 2);
        assert.equal(all.pages, Math.ceil(all.total / 2));
      });

      it('filters by status in the query, so that total and pages count the matching versions only', async () => {
        const maintainer = await t.tokenFor('maintainer');
        await deb({ name: 'status-filter', version: '1.0-1' });
        await deb({ name: 'status-filter', version: '2.0-1' });
        const q = await t.app.inject({ method: 'POST', url: '/security/packages/status-filter/1.0-1/quarantine?distribution=jammy', headers: bearer(maintainer), payload: { reason: 'status filter test' } });
        assert.equal(q.statusCode, 200, q.body);
        try {
          const held = (await get('/packages?status=quarantined&per_page=1')).json();
          assert.equal(held.total, 1);
          assert.equal(held.pages, 1);
          assert.deepEqual(held.items.map((i: { name: string; version: string; status: string }) => `${i.name}=${i.version}:${i.status}`), ['status-filter=1.0-1:quarantined']);
          const published = (await get('/packages?status=published&q=status-filter&per_page=1')).json();
          assert.equal(published.total, 1);
          assert.deepEqual(published.items.map((i: { version: string }) => i.version), ['2.0-1']);
          const everything = (await get('/packages?per_page=1')).json().total;
          assert.equal((await get('/packages?status=published')).json().total, everything - 1);
          assert.equal((await get('/packages?status=quarantined&distribution=rocky9')).json().total, 0);
          const bad = await get('/packages?status=bogus');
          assert.equal(bad.statusCode, 422, bad.body);
          assert.equal(typeof bad.json().detail, 'string');
          assert.equal(typeof bad.json().code, 'string');
        } finally {
          await t.app.inject({ method: 'DELETE', url: '/artifacts/status-filter', headers: bearer(admin) });
        }
      });
    });

    describe('DELETE /artifacts', () => {
      it('is refused to uploaders and readers', async () => {
        for (const role of ['uploader', 'reader', 'auditor'] as const) {
          const res = await t.app.inject({ method: 'DELETE', url: '/artifacts/dep-base/1.0-1', headers: bearer(await t.tokenFor(role)) });
          assert.equal(res.statusCode, 403, role);
        }
        assert.equal((await get('/artifacts/dep-base')).json().versions.length, 2);
      });

      it('deletes one version, then all versions, unpublishing files and auditing DELETE', async () => {
        const pool = (v: string) => join(t.dataDir, 'repo', 'apt', 'pool', 'main', 'd', 'dep-base', `dep-base_${v}_amd64.deb`);
        const packagesFile = join(t.dataDir, 'repo', 'apt', 'dists', 'jammy', 'main', 'binary-amd64', 'Packages');
        const { readFile } = await import('node:fs/promises');
        assert.match(await readFile(packagesFile, 'utf8'), /^Version: 1\.0-1$/m);
        const maintainer = await t.tokenFor('maintainer', 'maint');
        const one = await t.app.inject({ method: 'DELETE', url: '/artifacts/dep-base/1.0-1', headers: bearer(maintainer) });
        assert.equal(one.statusCode, 200, one.body);
        assert.deepEqual(one.json(), { deleted: 1, items: [{ version: '1.0-1', arch: 'amd64', distribution: 'jammy' }] });
        assert.equal(await exists(pool('1.0-1')), false);
        assert.equal(await exists(pool('2.0-1')), true);
        const index = await readFile(packagesFile, 'utf8');
        assert.doesNotMatch(index, /^Package: dep-base\nVersion: 1\.0-1$/m);
        assert.match(index, /^Version: 2\.0-1$/m);
        assert.deepEqual((await get('/artifacts/dep-base')).json().versions.map((v: { version: string }) => v.version), ['2.0-1']);

        const all = await t.app.inject({ method: 'DELETE', url: '/api/v1/artifacts/dep-base/', headers: bearer(maintainer) });
        assert.equal(all.statusCode, 200, all.body);
        assert.equal(all.json().deleted, 1);
        assert.equal((await get('/artifacts/dep-base')).statusCode, 404);
        assert.equal(await exists(pool('2.0-1')), false);
        assert.doesNotMatch(await readFile(packagesFile, 'utf8'), /^Package: dep-base$/m);
        // the dependants notice
        assert.equal((await get('/artifacts/dep-ok/dependencies')).json().all_satisfied, false);

        const audit = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'DELETE').where('package', '=', 'dep-base').orderBy('seq').execute();
        assert.deepEqual(audit.map((a) => [a.version, a.result, a.username]), [['1.0-1', 'SUCCESS', 'maint'], ['2.0-1', 'SUCCESS', 'maint']]);
        assert.match(audit[0]!.detail ?? '', /distribution=jammy/);
      });
    });

    describe('POST /artifacts/admin/sync-index', () => {
      it('relinks a pool file removed by hand, reports stray and missing files, and audits', async () => {
        await deb({ name: 'sync-pkg', version: '1.0' }, 'focal');
        const row = await t.ctx.db.selectFrom('packages').selectAll().where('name', '=', 'sync-pkg').executeTakeFirstOrThrow();
        const poolFile = join(t.dataDir, 'repo', row.pool_path);
        await rm(poolFile);
        const stray = join(t.dataDir, 'repo', 'apt', 'pool', 'main', 's', 'stray', 'stray_1.0_amd64.deb');
        await mkdir(dirname(stray), { recursive: true });
        await writeFile(stray, 'not referenced');
        assert.equal((await t.app.inject({ method: 'POST', url: '/artifacts/admin/sync-index', headers: bearer(await t.tokenFor('uploader')) })).statusCode, 403);

        const res = await t.app.inject({ method: 'POST', url: '/artifacts/admin/sync-index', headers: bearer(await t.tokenFor('maintainer')) });
        assert.equal(res.statusCode, 200, res.body);
        const report = res.json();
        assert.equal(report.relinked, 1);
        assert.deepEqual(report.unreferenced_files, ['apt/pool/main/s/stray/stray_1.0_amd64.deb']);
        assert.deepEqual(report.missing_files, []);
        assert.equal(report.distributions.length, 11);
        assert.equal(report.packages_indexed, Number((await t.ctx.db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n));
        assert.equal(await exists(poolFile), true);
        assert.equal((await t.app.inject({ method: 'GET', url: `/repo/${row.pool_path}` })).statusCode, 200);

        // a stored file lost from the store is reported, not silently dropped
        await rm(join(t.dataDir, 'store', row.sha256.slice(0, 2), row.sha256));
        const lost = (await t.app.inject({ method: 'POST', url: '/artifacts/admin/sync-index', headers: bearer(admin) })).json();
        assert.deepEqual(lost.missing_files.map((m: { package: string; sha256: string }) => [m.package, m.sha256]), [['sync-pkg', row.sha256]]);
        const audit = await t.ctx.db.selectFrom('audit_index').select(['result', 'detail']).where('action', '=', 'SYNC_INDEX').orderBy('seq').execute();
        assert.deepEqual(audit.map((a) => a.result), ['SUCCESS', 'WARNING']);
        assert.match(audit[0]!.detail ?? '', /relinked=1/);
      });
    });
  });
}
