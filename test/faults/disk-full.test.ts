/**
 * Disk full: DATA_DIR (database, audit files, store, published tree) on a 64 MiB tmpfs. With the
 * disk filled to within a few kilobytes, each upload fails at a different stage (temp file, store,
 * database, index, audit); every one must answer 507 `insufficient_storage` (or be published
 * whole), reads keep working, and nothing half-written remains: no temp file, no stored file
 * without its row, no row without its file, an index listing exactly the published rows. Once
 * space is freed, uploads succeed and apt accepts the signed index. Needs root (mount); skipped
 * otherwise.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { buildDeb } from '../../harness/debs.js';
import { exec } from '../helpers/apt.js';
import { makeTempDir } from '../helpers/tmp.js';
import { adminToken, call, leftoverTempFiles, startService, uploadFile, verifyAptRepository, waitUpToDate, type RunningService } from './support.js';

const isRoot = process.getuid?.() === 0;

async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/** Fills the filesystem of `dir` until only about `slack` bytes are left (a ballast file). */
async function fillLeaving(dir: string, slack: number): Promise<void> {
  const ballast = join(dir, 'ballast');
  await rm(ballast, { force: true });
  // The service may write between the look and the fill: retry a little smaller.
  for (let attempt = 0; attempt < 5; attempt++) {
    const size = Math.max(0, (await freeBytes(dir)) - slack - attempt * 65_536);
    if (size === 0) return;
    const made = await exec('fallocate', ['-l', String(size), ballast]);
    if (made.code === 0) return;
    await rm(ballast, { force: true });
  }
  assert.fail(`could not fill ${dir}`);
}

describe('disk full: DATA_DIR on a small tmpfs', { skip: isRoot ? false : 'needs root to mount a tmpfs' }, () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  let mount: string;
  let mounted = false;
  let mountRefused = '';
  let service: RunningService | null = null;

  before(async () => {
    work = await makeTempDir('tollgate-diskfull-');
    mount = join(work.dir, 'fs');
    await mkdir(mount);
    const mountResult = await exec('mount', ['-t', 'tmpfs', '-o', 'size=64m,mode=0700', 'tmpfs', mount]);
    // Root without the right to mount (a container without CAP_SYS_ADMIN): skipped, with the reason.
    if (mountResult.code === 0) mounted = true;
    else mountRefused = mountResult.stderr.trim();
  });

  after(async () => {
    await service?.kill();
    if (mounted) await exec('umount', ['-l', mount]);
    await work?.cleanup();
  });

  it('answers 507 at every stage an upload can run out of space, keeps reads working, leaves nothing half-written and recovers once space is freed', async (t) => {
    if (!mounted) return t.skip(`cannot mount a tmpfs: ${mountRefused}`);
    const dataDir = join(mount, 'data');
    service = await startService(dataDir);
    const { base } = service;
    const token = await adminToken(base, dataDir);

    const build = (name: string, bytes: number) =>
      buildDeb(work.dir, { name, version: '1.0', compression: 'gzip', files: { [`usr/share/${name}/blob`]: randomBytes(bytes) } });
    const published = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await uploadFile(base, token, await build(`before-${i}`, 20_000));
      assert.equal(res.status, 201, res.text);
      published.add(`before-${i}`);
    }
    await waitUpToDate(base, token);

    // From nothing left to a little more than one package: the upload runs out of space at a
    // later stage each time (temp file, store, database commit, index files, Release, audit).
    const slacks = [0, 4096, 65_536, 200_000, 280_000, 290_000, 300_000, 310_000, 320_000, 330_000, 340_000, 350_000, 360_000, 380_000, 400_000, 600_000];
    const answers: string[] = [];
    const refused = new Map<string, string>();
    for (const [i, slack] of slacks.entries()) {
      await fillLeaving(mount, slack);
      const name = `full-${i}`;
      // Built outside the tmpfs; 256 KiB of random bytes do not compress.
      const file = await build(name, 256 * 1024);
      const res = await uploadFile(base, token, file).catch((error: unknown) => {
        throw new Error(`slack ${slack}: no answer; the service ${service!.exited() ? 'exited' : 'runs'}:\n${service!.output().slice(-4000)}`, { cause: error });
      });
      answers.push(`${slack}: ${res.status}`);
      assert.ok(res.status === 201 || res.status === 507, `slack ${slack}: ${res.status} ${res.text}`);
      if (res.status === 201) published.add(name);
      else {
        assert.equal(res.body.code, 'insufficient_storage', res.text);
        refused.set(name, file);
      }
      assert.equal(service.exited(), false, `the service exited:\n${service.output()}`);
      // Reads keep working on a full disk.
      assert.equal((await call(base, token, 'GET', '/artifacts')).status, 200);
      assert.equal((await fetch(`${base}/repo/apt/dists/jammy/InRelease`)).status, 200);
      assert.equal((await call(base, token, 'GET', '/artifacts/before-0')).status, 200);
    }
    assert.ok(refused.size >= 5, `uploads on a full disk were refused: ${answers.join(', ')}`);

    // Nothing half-written: no temp file; every stored file is whole and has its row, every row
    // its file. A 507 that came after the row was committed (the index or audit could not be
    // written) leaves a whole package that the next publish lists; nothing else remains of it.
    await rm(join(mount, 'ballast'), { force: true });
    // A publish that failed for want of space is tried again by the publisher once there is some
    // (after a pause of up to 30 s); while it writes, its temp files are not leftovers. Once the
    // index is up to date nothing is writing.
    await waitUpToDate(base, token, 90_000);
    assert.deepEqual(await leftoverTempFiles(dataDir), []);
    assert.deepEqual(await readdir(join(dataDir, 'tmp')), []);
    const db = new SQLite(join(dataDir, 'tollgate.db'), { readonly: true });
    const rows = db.prepare("select name, status, sha256, pool_path from packages where distribution = 'jammy'").all() as Array<{ name: string; status: string; sha256: string; pool_path: string }>;
    db.close();
    for (const name of published) assert.ok(rows.some((r) => r.name === name && r.status === 'published'), `${name} was answered 201 but has no published row`);
    for (const row of rows) assert.ok(published.has(row.name) || refused.has(row.name), `${row.name}: a row of an upload never made`);
    const stored = (await exec('find', [join(dataDir, 'store'), '-type', 'f'])).stdout.split('\n').filter(Boolean);
    assert.equal(stored.length, rows.length, `stored files ${stored.length}, rows ${rows.length}`);
    for (const file of stored) {
      const sha = createHash('sha256').update(await readFile(file)).digest('hex');
      assert.ok(file.endsWith(sha), `${file} is not whole`);
      assert.ok(rows.some((r) => r.sha256 === sha), `${file} has no row`);
    }
    for (const row of rows) assert.ok((await readFile(join(dataDir, 'repo', row.pool_path))).length > 0, `${row.name}: pool file`);

    // Space freed: a new upload succeeds, each refused one retried is published (201) or found
    // stored whole (200), and apt accepts the signed index, which lists exactly all of them.
    const res = await uploadFile(base, token, await build('after-free', 256 * 1024));
    assert.equal(res.status, 201, res.text);
    published.add('after-free');
    let storedBefore = 0;
    for (const [name, file] of refused) {
      const again = await uploadFile(base, token, file);
      assert.ok(again.status === 201 || again.status === 200, `retry of ${name}: ${again.status} ${again.text}`);
      if (again.status === 200) storedBefore++;
      published.add(name);
    }
    await waitUpToDate(base, token);
    const indexed = await verifyAptRepository(base, work.dir, 'jammy', published);
    assert.deepEqual(indexed, published, 'the index lists exactly the packages answered 201 or 200');
    const audit = await call(base, token, 'GET', '/audit/verify');
    assert.equal(audit.body.ok, true, audit.text);
    console.log(`disk full: ${slacks.length} uploads on a full disk, ${refused.size} answered 507 (${storedBefore} of them already stored whole, 200 on retry), ${published.size} packages in the index, 0 lost: ${answers.join(', ')}`);
  });
});
