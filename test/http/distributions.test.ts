import assert from 'node:assert/strict';
import { access, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb, type DebSpec } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm, type RpmSpec } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';

const exists = (path: string) => access(path).then(() => true, () => false);

const CODENAMES = ['jammy', 'noble', 'focal', 'bookworm', 'almalinux8', 'almalinux9', 'rocky8', 'rocky9', 'centos-stream9', 'fedora', 'opensuse-leap-15.6'];

for (const backend of backends()) {
  describe(`distributions endpoints (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    let maintainer: string;
    let work: { dir: string; cleanup: () => Promise<void> };
    let n = 0;

    const get = (url: string) => t.app.inject({ method: 'GET', url, headers: bearer(maintainer) });
    const post = (url: string, payload?: object, token = maintainer) =>
      t.app.inject({ method: 'POST', url, headers: bearer(token), ...(payload === undefined ? {} : { payload }) });
    const uploadFile = async (path: string, distribution: string) => {
      const form = await multipartBody({ distribution }, { path });
      const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };
    const deb = async (spec: DebSpec, distribution: string) => {
      const dir = join(work.dir, `d${n++}`);
      await mkdir(dir, { recursive: true });
      return uploadFile(await buildDeb(dir, spec), distribution);
    };
    const rpm = async (spec: RpmSpec, distribution: string) => {
      const dir = join(work.dir, `r${n++}`);
      return uploadFile(await buildRpm(dir, { noAutoReqProv: true, ...spec }), distribution);
    };
    const aptIndex = (codename: string) => readFile(join(t.dataDir, 'repo', 'apt', 'dists', codename, 'main', 'binary-amd64', 'Packages'), 'utf8');
    const rpmPrimary = async (codename: string) => {
      const repodata = join(t.dataDir, 'repo', 'rpm', codename, 'x86_64', 'repodata');
      const file = (await readdir(repodata)).find((f) => f.endsWith('-primary.xml.gz'))!;
      return gunzipSync(await readFile(join(repodata, file))).toString('utf8');
    };
    /** Versions of `name` listed in a Packages index. */
    const aptVersions = (index: string, name: string) =>
      index.split('\n\n').filter((st) => new RegExp(`^Package: ${name}$`, 'm').test(st)).map((st) => /^Version: (.*)$/m.exec(st)![1]).sort();
    const names = (items: Array<{ name: string; version: string }>) => items.map((i) => `${i.name}=${i.version}`).sort();

    before(async () => {
      work = await makeTempDir('tollgate-dists-');
      t = await startTestApp({ backend });
      admin = await t.tokenFor('admin');
      maintainer = await t.tokenFor('maintainer', 'maint');
      await deb({ name: 'promo-a', version: '1.0-1' }, 'jammy');
      await deb({ name: 'promo-a', version: '1.1-1' }, 'jammy');
      await deb({ name: 'promo-b', version: '2.0', arch: 'all' }, 'jammy');
      await deb({ name: 'promo-c', version: '3.0' }, 'jammy');
      await rpm({ name: 'rpm-promo', version: '1.0', files: { '/usr/share/rpm-promo/a': 'a\n' } }, 'rocky9');
      await rpm({ name: 'rpm-other', version: '5.0', arch: 'noarch', files: { '/usr/share/rpm-other/a': 'a\n' } }, 'rocky9');
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    it('lists the eleven distributions of DECISIONS §7 with format, architecture, component and package count', async () => {
      const res = await get('/distributions');
      assert.equal(res.statusCode, 200, res.body);
      const list = res.json() as Array<{ codename: string; format: string; architecture: string; component: string | null; package_count: number }>;
      assert.ok(Array.isArray(list), 'a small admin list is a plain array');
      assert.deepEqual(list.map((d) => d.codename).sort(), [...CODENAMES].sort());
      for (const d of list) {
        const apt = ['jammy', 'noble', 'focal', 'bookworm'].includes(d.codename);
        assert.equal(d.format, apt ? 'deb' : 'rpm', d.codename);
        assert.equal(d.architecture, apt ? 'amd64' : 'x86_64', d.codename);
        if (apt) assert.equal(d.component, 'main');
      }
      const count = (c: string) => list.find((d) => d.codename === c)!.package_count;
      assert.equal(count('jammy'), 4);
      assert.equal(count('rocky9'), 2);
      assert.equal(count('noble'), 0);
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/distributions/', headers: bearer(await t.tokenFor('reader')) })).statusCode, 200);
    });

    it('lists the packages of one distribution (paginated) and 404s an unknown codename', async () => {
      const res = await get('/distributions/jammy/packages?per_page=2');
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.total, 4);
      assert.equal(body.pages, 2);
      assert.equal(body.items.length, 2);
      const all = (await get('/distributions/jammy/packages')).json();
      assert.deepEqual(names(all.items), ['promo-a=1.0-1', 'promo-a=1.1-1', 'promo-b=2.0', 'promo-c=3.0']);
      assert.equal((await get('/distributions/noble/packages')).json().total, 0);
      const unknown = await get('/distributions/xenial/packages');
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().code, 'unknown_distribution');
    });

    describe('POST /distributions/promote', () => {
      it('copies one version (form 1) into the target index without re-scanning it', async () => {
        const res = await post('/distributions/promote', { name: 'promo-a', version: '1.0-1', arch: 'amd64', from_distribution: 'jammy', to_distribution: 'noble' });
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json().promoted, [{ package: 'promo-a', version: '1.0-1', arch: 'amd64', from: 'jammy', to: 'noble', status: 'published', result: 'copied' }]);
        const noble = await aptIndex('noble');
        assert.deepEqual(aptVersions(noble, 'promo-a'), ['1.0-1']);
        const [src, dst] = await Promise.all(['jammy', 'noble'].map((d) => t.ctx.db.selectFrom('packages').selectAll().where('name', '=', 'promo-a').where('version', '=', '1.0-1').where('distribution', '=', d).executeTakeFirstOrThrow()));
        assert.equal(dst!.sha256, src!.sha256);
        assert.equal(dst!.pipeline, src!.pipeline, 'the validation results carry over, nothing is re-run');
        assert.equal(dst!.status, src!.status);
        // a second promotion is harmless
        const again = await post('/distributions/promote', { name: 'promo-a', version: '1.0-1', from_distribution: 'jammy', to_distribution: 'noble' });
        assert.equal(again.statusCode, 200);
        assert.equal(again.json().promoted[0].result, 'already_present');
        const audit = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'PROMOTE').execute();
        assert.ok(audit.some((a) => a.package === 'promo-a' && a.username === 'maint' && /jammy -> noble/.test(a.detail ?? '')));
      });

      it('copies the newest version with form 2 (package, from_dist, to_dist)', async () => {
        const res = await post('/api/v1/distributions/promote', { package: 'promo-a', from_dist: 'jammy', to_dist: 'focal' });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().promoted[0].version, '1.1-1');
        assert.deepEqual(aptVersions(await aptIndex('focal'), 'promo-a'), ['1.1-1']);
        const rpmRes = await post('/distributions/promote', { package: 'rpm-promo', from_dist: 'rocky9', to_dist: 'almalinux9' });
        assert.equal(rpmRes.statusCode, 200, rpmRes.body);
        const primary = await rpmPrimary('almalinux9');
        assert.match(primary, /<name>rpm-promo<\/name>/);
        // The signed copy, in a folder named by its digest: the same relative path as in rocky9.
        const href = /<location href="(Packages\/r\/[0-9a-f]{16}\/rpm-promo-1\.0-1\.x86_64\.rpm)"\/>/.exec(primary)?.[1];
        assert.ok(href, primary);
        assert.match(await rpmPrimary('rocky9'), new RegExp(`<location href="${href}"/>`));
        assert.equal((await t.app.inject({ method: 'GET', url: `/repo/rpm/almalinux9/x86_64/${href}` })).statusCode, 200);
        // "newest" is the highest version, not the last upload (a backport)
        await rpm({ name: 'rpm-back', version: '2.0', files: { '/usr/share/rpm-back/a': '2' } }, 'fedora');
        await rpm({ name: 'rpm-back', version: '1.5', files: { '/usr/share/rpm-back/a': '1' } }, 'fedora');
        const back = await post('/distributions/promote', { package: 'rpm-back', from_dist: 'fedora', to_dist: 'opensuse-leap-15.6' });
        assert.equal(back.statusCode, 200, back.body);
        assert.equal(back.json().promoted[0].version, '2.0-1');
      });

      it('answers 409 when the target holds other bytes under the same version, 404 for a missing package, 422 across formats', async () => {
        await rpm({ name: 'rpm-clash', version: '1.0', files: { '/usr/share/rpm-clash/a': 'rocky\n' } }, 'rocky9');
        await rpm({ name: 'rpm-clash', version: '1.0', files: { '/usr/share/rpm-clash/a': 'alma\n' } }, 'almalinux8');
        const conflict = await post('/distributions/promote', { name: 'rpm-clash', version: '1.0-1', from_distribution: 'rocky9', to_distribution: 'almalinux8' });
        assert.equal(conflict.statusCode, 409, conflict.body);
        assert.equal(conflict.json().code, 'version_exists');
        assert.match(conflict.json().existing_sha256, /^[0-9a-f]{64}$/);
        assert.notEqual(conflict.json().existing_sha256, conflict.json().incoming_sha256);

        const missing = await post('/distributions/promote', { name: 'nope', version: '1.0', from_distribution: 'jammy', to_distribution: 'noble' });
        assert.equal(missing.statusCode, 404);
        assert.equal(missing.json().code, 'package_not_found');
        assert.equal((await post('/distributions/promote', { package: 'nope', from_dist: 'jammy', to_dist: 'noble' })).statusCode, 404);
        assert.equal((await post('/distributions/promote', { name: 'promo-c', version: '9.9', from_distribution: 'jammy', to_distribution: 'noble' })).statusCode, 404);

        const cross = await post('/distributions/promote', { package: 'promo-c', from_dist: 'jammy', to_dist: 'rocky9' });
        assert.equal(cross.statusCode, 422);
        assert.equal(cross.json().code, 'format_mismatch');
        assert.equal((await post('/distributions/promote', { package: 'promo-c', from_dist: 'jammy', to_dist: 'jammy' })).statusCode, 422);
        const invalid = await post('/distributions/promote', { package: 'promo-c' });
        assert.equal(invalid.statusCode, 422);
        assert.equal(invalid.json().code, 'validation_error');
        const nowhere = await post('/distributions/promote', { package: 'promo-c', from_dist: 'jammy', to_dist: 'nowhere' });
        assert.equal(nowhere.statusCode, 422, 'a codename in a body is a value from a fixed list, as in upload');
        assert.equal(nowhere.json().code, 'unknown_distribution');
        assert.equal((await post('/distributions/promote', { package: 'promo-c', from_dist: 'jammy', to_dist: 'noble' }, await t.tokenFor('uploader'))).statusCode, 403);
        assert.equal((await get('/distributions/rocky9/packages')).json().items.filter((i: { name: string }) => i.name === 'promo-c').length, 0);
      });
    });

    describe('POST /distributions/migrate', () => {
      it('copies only the named packages (form 1) and leaves the source as it was', async () => {
        const res = await post('/distributions/migrate', { from_distribution: 'jammy', to_distribution: 'bookworm', packages: ['promo-b', 'promo-c'] });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().migrated, 2);
        assert.deepEqual(names((await get('/distributions/bookworm/packages')).json().items), ['promo-b=2.0', 'promo-c=3.0']);
        assert.equal((await get('/distributions/jammy/packages')).json().total, 4, 'the source is not emptied');
        const index = await aptIndex('bookworm');
        assert.deepEqual(aptVersions(index, 'promo-b'), ['2.0']);
        assert.deepEqual(aptVersions(index, 'promo-a'), []);
      });

      it('copies every package with form 2, reporting the ones already present', async () => {
        const res = await post('/api/v1/distributions/migrate', { from_dist: 'jammy', to_dist: 'bookworm' });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().migrated, 2);
        assert.deepEqual(res.json().items.map((i: { package: string; version: string; result: string }) => `${i.package}=${i.version}:${i.result}`).sort(), [
          'promo-a=1.0-1:copied', 'promo-a=1.1-1:copied', 'promo-b=2.0:already_present', 'promo-c=3.0:already_present',
        ]);
        assert.deepEqual(names((await get('/distributions/bookworm/packages')).json().items), names((await get('/distributions/jammy/packages')).json().items));
        assert.deepEqual(aptVersions(await aptIndex('bookworm'), 'promo-a'), ['1.0-1', '1.1-1']);
        const audit = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'MIGRATE').execute();
        assert.equal(audit.length, 2);
      });

      it('copies nothing when one package conflicts with the target (409), and refuses cross-format moves', async () => {
        // rocky9 holds rpm-promo, rpm-other and rpm-clash; almalinux8 has another rpm-clash 1.0-1
        const res = await post('/distributions/migrate', { from_dist: 'rocky9', to_dist: 'almalinux8' });
        assert.equal(res.statusCode, 409, res.body);
        assert.equal(res.json().code, 'version_exists');
        const target = (await get('/distributions/almalinux8/packages')).json();
        assert.deepEqual(names(target.items), ['rpm-clash=1.0-1'], 'no partial migration');
        assert.doesNotMatch(await rpmPrimary('almalinux8'), /rpm-promo|rpm-other/);
        const cross = await post('/distributions/migrate', { from_dist: 'rocky9', to_dist: 'noble' });
        assert.equal(cross.statusCode, 422);
        assert.equal(cross.json().code, 'format_mismatch');
        assert.equal((await post('/distributions/migrate', { from_dist: 'rocky9' })).statusCode, 422);
        assert.equal((await post('/distributions/migrate', { from_dist: 'rocky9', to_dist: 'almalinux8' }, await t.tokenFor('uploader'))).statusCode, 403);
      });
    });

    describe('POST /distributions/init', () => {
      it('re-initialises every distribution (form 2), re-exporting signed indexes; admin only; audited', async () => {
        const inRelease = join(t.dataDir, 'repo', 'apt', 'dists', 'noble', 'InRelease');
        const repomd = join(t.dataDir, 'repo', 'rpm', 'fedora', 'x86_64', 'repodata', 'repomd.xml');
        await rm(inRelease);
        await rm(repomd, { force: true }); // the test harness does not run the start-up publishing
        const denied = await post('/distributions/init', undefined, maintainer);
        assert.equal(denied.statusCode, 403);
        const res = await post('/distributions/init', undefined, admin);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual([...res.json().initialized].sort(), [...CODENAMES].sort());
        assert.equal(await exists(inRelease), true);
        assert.equal(await exists(repomd), true);
        assert.match(await readFile(inRelease, 'utf8'), /^-----BEGIN PGP SIGNED MESSAGE-----/);
        assert.deepEqual(aptVersions(await aptIndex('noble'), 'promo-a'), ['1.0-1'], 'packages stay published');
        const empty = await post('/api/v1/distributions/init', {}, admin);
        assert.equal(empty.statusCode, 200, empty.body);
        const audit = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'INIT_DISTS').execute();
        assert.equal(audit.length, 2);
        assert.equal(audit[0]!.username, 'admin');
        assert.equal(audit[0]!.result, 'SUCCESS');
      });

      it('initialises one codename with a description (form 1); unknown codename 422', async () => {
        const res = await post('/distributions/init', { codename: 'focal', description: 'Focal for the build farm' }, admin);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json().initialized, ['focal']);
        const focal = (await get('/distributions')).json().find((d: { codename: string }) => d.codename === 'focal');
        assert.equal(focal.description, 'Focal for the build farm');
        const unknown = await post('/distributions/init', { codename: 'xenial', description: 'x' }, admin);
        assert.equal(unknown.statusCode, 422);
        assert.equal(unknown.json().code, 'unknown_distribution');
        const audit = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'INIT_DISTS').orderBy('seq').execute();
        assert.match(audit.at(-1)!.detail ?? '', /focal/);
      });
    });
  });
}
