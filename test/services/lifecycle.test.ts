/**
 * The package lifecycle called directly (no HTTP): promotion and migration copy rows, not bytes,
 * and refuse what the contract refuses; deletion unpublishes a shared pool file only with its
 * last reference; the index sync relinks a lost pool link and reports strays; each use case
 * audits itself under the actor it is given.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { DomainError } from '../../src/domain/errors.js';
import type { Actor } from '../../src/services/actor.js';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { makeTempDir } from '../helpers/tmp.js';

const ACTOR: Actor = { username: 'lifecycle-test', ip: '192.0.2.7' };

describe('package lifecycle, called directly', () => {
  let t: TestApp;
  let work: { dir: string; cleanup: () => Promise<void> };
  let admin: string;

  before(async () => {
    work = await makeTempDir('tollgate-lifecycle-');
    t = await startTestApp();
    admin = await t.tokenFor('admin');
    for (const [name, version] of [['lc-one', '1:1.0+dfsg-1'], ['lc-two', '2.0~rc1-1'], ['lc-three', '3.0-1']] as const) {
      const dir = join(work.dir, name);
      await mkdir(dir);
      const path = await buildDeb(dir, { name, version });
      const { payload, headers } = await multipartBody({ distribution: 'jammy' }, { path });
      const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...headers, ...bearer(admin) }, payload });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  const lifecycle = () => t.ctx.repo.lifecycle;
  const packagesOf = (codename: string) => readFile(join(t.dataDir, 'repo', 'apt', 'dists', codename, 'main', 'binary-amd64', 'Packages'), 'utf8');
  const audits = (action: string) => t.ctx.db.selectFrom('audit_index').select(['username', 'package', 'detail', 'ip']).where('action', '=', action).orderBy('seq').execute();
  const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof DomainError ? e.code : String(e)));

  it('promote copies the row into the target index (same pool file), refuses what it must, and audits', async () => {
    const [promoted] = await lifecycle().promote('lc-one', '1:1.0+dfsg-1', undefined, 'jammy', 'noble', ACTOR);
    assert.equal(promoted!.result, 'copied');
    assert.match(await packagesOf('noble'), /^Package: lc-one$/m);
    const [source] = await lifecycle().rows('lc-one', { distribution: 'jammy' });
    const [copy] = await lifecycle().rows('lc-one', { distribution: 'noble' });
    assert.equal(copy!.sha256, source!.sha256);
    assert.equal(copy!.pool_path, source!.pool_path, 'APT distributions share one pool');
    assert.equal(copy!.status, source!.status);

    const [again] = await lifecycle().promote('lc-one', '1:1.0+dfsg-1', undefined, 'jammy', 'noble', ACTOR);
    assert.equal(again!.result, 'already_present');
    assert.equal(await codeOf(lifecycle().promote('lc-one', '1:1.0+dfsg-1', undefined, 'jammy', 'rocky9', ACTOR)), 'format_mismatch');
    assert.equal(await codeOf(lifecycle().promote('lc-one', '1:1.0+dfsg-1', undefined, 'jammy', 'jammy', ACTOR)), 'same_distribution');
    assert.equal(await codeOf(lifecycle().promote('lc-none', '1.0', undefined, 'jammy', 'noble', ACTOR)), 'package_not_found');
    assert.equal(await codeOf(lifecycle().promote('lc-one', '1:1.0+dfsg-1', undefined, 'jammy', 'hardy', ACTOR)), 'unknown_distribution');

    const records = await audits('PROMOTE');
    assert.equal(records.length, 2);
    assert.deepEqual({ ...records[0] }, { username: 'lifecycle-test', package: 'lc-one', detail: 'jammy -> noble; arch=amd64; copied', ip: '192.0.2.7' });
  });

  it('migrate copies the named packages (or all) and leaves the source as it was', async () => {
    const named = await lifecycle().migrate('jammy', 'focal', ['lc-two'], ACTOR);
    assert.deepEqual(named.map((i) => [i.package, i.result]), [['lc-two', 'copied']]);
    const all = await lifecycle().migrate('jammy', 'focal', null, ACTOR);
    assert.deepEqual(all.map((i) => [i.package, i.result]).sort(), [['lc-one', 'copied'], ['lc-three', 'copied'], ['lc-two', 'already_present']]);
    const jammy = await packagesOf('jammy');
    for (const name of ['lc-one', 'lc-two', 'lc-three']) {
      assert.match(jammy, new RegExp(`^Package: ${name}$`, 'm'));
      assert.match(await packagesOf('focal'), new RegExp(`^Package: ${name}$`, 'm'));
    }
    const records = await audits('MIGRATE');
    assert.deepEqual(records.map((r) => r.detail), ['jammy -> focal; copied=1; present=0', 'jammy -> focal; copied=2; present=1']);
  });

  it('delete unpublishes a shared pool file only with its last reference', async () => {
    const [jammyRow] = await lifecycle().rows('lc-three', { distribution: 'jammy' });
    const poolFile = join(t.dataDir, 'repo', jammyRow!.pool_path);
    await lifecycle().delete([jammyRow!], ACTOR);
    assert.doesNotMatch(await packagesOf('jammy'), /^Package: lc-three$/m);
    assert.ok(existsSync(poolFile), 'focal still lists it, so the pool file stays');
    assert.ok(await t.ctx.repo.files.has(jammyRow!.sha256));

    await lifecycle().delete(await lifecycle().rows('lc-three'), ACTOR);
    assert.doesNotMatch(await packagesOf('focal'), /^Package: lc-three$/m);
    assert.ok(!existsSync(poolFile), 'the last reference took the pool file with it');
    assert.equal(await t.ctx.repo.files.has(jammyRow!.sha256), false, 'and the stored file');
    assert.deepEqual((await audits('DELETE')).map((r) => r.detail), ['distribution=jammy; arch=amd64; status=published', 'distribution=focal; arch=amd64; status=published']);
  });

  it('syncIndex relinks a lost pool link and reports a stray file; initialise re-signs a distribution', async () => {
    const [row] = await lifecycle().rows('lc-two', { distribution: 'jammy' });
    const poolFile = join(t.dataDir, 'repo', row!.pool_path);
    await rm(poolFile);
    const stray = join(t.dataDir, 'repo', 'apt', 'pool', 'main', 's', 'stray', 'stray_1.0_amd64.deb');
    await mkdir(dirname(stray), { recursive: true });
    await writeFile(stray, 'not a package of ours');

    const report = await lifecycle().syncIndex(ACTOR);
    assert.equal(report.relinked, 1);
    assert.deepEqual(report.missing_files, []);
    assert.deepEqual(report.unreferenced_files, ['apt/pool/main/s/stray/stray_1.0_amd64.deb']);
    assert.ok(existsSync(poolFile));
    const [sync] = await audits('SYNC_INDEX');
    assert.match(sync!.detail!, /relinked=1/);

    assert.deepEqual(await lifecycle().initialise(['bookworm'], 'Bookworm, re-initialised', ACTOR), ['bookworm']);
    assert.equal(await codeOf(lifecycle().initialise(['hardy'], null, ACTOR)), 'unknown_distribution');
    const [init] = await audits('INIT_DISTS');
    assert.equal(init!.detail, 'initialized: bookworm');
    assert.match(await readFile(join(t.dataDir, 'repo', 'apt', 'dists', 'bookworm', 'InRelease'), 'utf8'), /-----BEGIN PGP SIGNATURE-----/);
  });
});
