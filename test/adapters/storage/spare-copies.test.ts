/**
 * Spare copies: after a publish, copies of the files it wrote are made in the background, and the
 * next append extends them instead of copying on its serial path. What is published must be the
 * same bytes either way, the spare must really be the file that becomes the new object, and no
 * spare may outlive its use (replaced, discarded, or left by a process that is gone).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KeyringStore } from '../../../src/adapters/signing/keyring-store.js';
import type { Signer } from '../../../src/adapters/signing/signer.js';
import { appendAptDistribution, aptPublishingSettled, publishAptDistribution, type AptEntry, type AptPublishOptions, type AptPublishResult } from '../../../src/adapters/storage/apt-publisher.js';
import { FsPackageFiles } from '../../../src/adapters/storage/fs-package-files.js';
import { SpareCopies, sparePathFor } from '../../../src/adapters/storage/spare-copies.js';
import { RUN_TAG } from '../../../src/adapters/storage/temp-names.js';
import { makeTempDir } from '../../helpers/tmp.js';

const entry = (i: number): AptEntry => ({
  component: 'main',
  arch: 'amd64',
  stanza: `Package: app-${i}\nVersion: 1.5.0+ds1-${i}+b4\nArchitecture: amd64\nFilename: pool/main/a/app-${i}/app-${i}_1.5.0+ds1-${i}+b4_amd64.deb\nSize: ${100 + i}\nDescription: app ${i}\n`,
  contents: `usr/bin/app-${i}\t\t\t\tutils/app-${i}\n`,
});
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const FILES = ['main/binary-amd64/Packages', 'main/binary-amd64/Packages.gz', 'main/binary-amd64/Packages.xz', 'main/Contents-amd64.gz'];

async function sparesIn(distDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const dir of [join(distDir, 'main', 'binary-amd64', 'by-hash', 'SHA256'), join(distDir, 'main', 'by-hash', 'SHA256'), join(distDir, 'main', 'source', 'by-hash', 'SHA256')]) {
    for (const name of await readdir(dir).catch(() => [])) if (name.endsWith('.spare')) found.push(join(dir, name));
  }
  return found;
}

describe('spare copies for the next append', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let signer: Signer;
  before(async () => {
    tmp = await makeTempDir('tollgate-spares-');
    const store = new KeyringStore({ dir: join(tmp.dir, 'keys'), publicDir: join(tmp.dir, 'pub'), passphrase: 'test-passphrase', defaults: { name: 'T', email: 't@example.org', type: 'ed25519' } });
    signer = await store.ensureKey();
  });
  after(() => tmp.cleanup());

  const options = (codename: string, extra: Partial<AptPublishOptions> = {}): AptPublishOptions => ({
    repoRoot: join(tmp.dir, 'apt'), codename, signer, origin: 'T', label: 'T', date: new Date('2026-11-28T00:00:00Z'), ...extra,
  });

  /** A full publish of 0..199, then appends of the given sizes; waits for the spares between them when `atRest`. */
  async function publishSeries(codename: string, spares: SpareCopies | undefined, atRest: boolean): Promise<AptPublishResult> {
    let next = 200;
    let result = await publishAptDistribution({ ...options(codename, spares ? { spares } : {}), entries: Array.from({ length: 200 }, (_, i) => entry(i)) });
    for (const size of [1, 3, 1, 40, 1]) {
      if (atRest) {
        await aptPublishingSettled(join(tmp.dir, 'apt'), codename);
        await spares?.settled();
      }
      const entries = Array.from({ length: size }, () => entry(next++));
      const appended = await appendAptDistribution({ ...options(codename, spares ? { spares } : {}), entries, previous: result.state });
      assert.equal(appended?.mode, 'append');
      result = appended!;
    }
    await aptPublishingSettled(join(tmp.dir, 'apt'), codename);
    await spares?.settled();
    return result;
  }

  it('publishes the same bytes as appends that copy for themselves, at rest and in a burst', async () => {
    const reference = await publishSeries('plain', undefined, false);
    for (const [codename, atRest] of [['rested', true], ['burst', false]] as const) {
      const spares = new SpareCopies();
      const result = await publishSeries(codename, spares, atRest);
      assert.deepEqual(result.files, reference.files, `${codename}: Release lists the same digests`);
      for (const file of FILES) {
        const bytes = await readFile(join(tmp.dir, 'apt', 'dists', codename, file));
        assert.ok(bytes.equals(await readFile(join(tmp.dir, 'apt', 'dists', 'plain', file))), `${codename}: ${file}`);
        assert.ok((await readFile(join(tmp.dir, 'apt', 'dists', codename, dirname(file), 'by-hash', 'SHA256', sha256(bytes)))).equals(bytes), `${codename}: by-hash object of ${file}`);
      }
      const dir = join(tmp.dir, 'apt', 'dists', codename, 'main', 'binary-amd64');
      const plain = await readFile(join(dir, 'Packages'));
      assert.ok(execFileSync('xz', ['-dc', join(dir, 'Packages.xz')]).equals(plain), `${codename}: Packages.xz`);
      assert.ok(execFileSync('gzip', ['-dc', join(dir, 'Packages.gz')]).equals(plain), `${codename}: Packages.gz`);
      // One spare a file the last append wrote, ready for the next one, and the (empty) Sources
      // index's three from the full publish.
      assert.equal((await sparesIn(join(tmp.dir, 'apt', 'dists', codename))).length, 4 + 3, codename);
      assert.equal(spawnSync('xz', ['-t', join(dir, 'Packages.xz')]).status, 0);
    }
  });

  it('extends the spare itself: the new object is the file copied after the last publish', async () => {
    const spares = new SpareCopies();
    const first = await publishAptDistribution({ ...options('inode', { spares }), entries: [entry(1), entry(2)] });
    await aptPublishingSettled(join(tmp.dir, 'apt'), 'inode');
    await spares.settled();
    const made = await sparesIn(join(tmp.dir, 'apt', 'dists', 'inode'));
    assert.equal(made.length, 4 + 3, 'Packages, .gz, .xz, Contents and the (empty) Sources index of the full publish');
    const inodes = new Set(await Promise.all(made.map(async (path) => (await stat(path)).ino)));
    const appended = await appendAptDistribution({ ...options('inode', { spares }), entries: [entry(3)], previous: first.state });
    for (const file of FILES) {
      const placed = await stat(join(tmp.dir, 'apt', 'dists', 'inode', file));
      assert.ok(inodes.has(placed.ino), `${file} is a spare extended`);
    }
    assert.equal(appended?.mode, 'append');
    await aptPublishingSettled(join(tmp.dir, 'apt'), 'inode');
    await spares.settled();
    // The Sources spares were not used (no source package came) and stay for its next append.
    const after = await sparesIn(join(tmp.dir, 'apt', 'dists', 'inode'));
    assert.equal(after.length, 7);
  });

  it('copies for itself when its spare was removed or changed behind its back', async () => {
    const full = Array.from({ length: 50 }, (_, i) => entry(i));
    const reference = await publishAptDistribution({ ...options('untouched'), entries: full });
    await appendAptDistribution({ ...options('untouched'), entries: [entry(50)], previous: reference.state });
    const spares = new SpareCopies(0);
    const published = await publishAptDistribution({ ...options('tampered', { spares }), entries: full });
    await aptPublishingSettled(join(tmp.dir, 'apt'), 'tampered');
    await spares.settled();
    const held = spares.held();
    const dir = join(tmp.dir, 'apt', 'dists', 'tampered');
    await rm(held.get(join(dir, 'main', 'binary-amd64', 'Packages'))!);
    await writeFile(held.get(join(dir, 'main', 'binary-amd64', 'Packages.gz'))!, 'short');
    await writeFile(held.get(join(dir, 'main', 'Contents-amd64.gz'))!, 'x', { flag: 'a' });
    const appended = await appendAptDistribution({ ...options('tampered', { spares }), entries: [entry(50)], previous: published.state });
    assert.equal(appended?.mode, 'append');
    for (const file of FILES) {
      assert.ok((await readFile(join(dir, file))).equals(await readFile(join(tmp.dir, 'apt', 'dists', 'untouched', file))), file);
    }
  });

  it('does not use a spare made from another file, and removes it', async () => {
    const spares = new SpareCopies();
    const source = join(tmp.dir, 'stale', 'object');
    await rm(dirname(source), { recursive: true, force: true });
    await mkdir(dirname(source), { recursive: true });
    await writeFile(source, 'first generation\n');
    spares.prepare('slot', source, null, true);
    await spares.settled();
    const [path] = [...spares.held().values()];
    assert.equal(await readFile(path!, 'utf8'), 'first generation\n');
    assert.equal(await spares.take('slot', join(tmp.dir, 'stale', 'other'), null), null);
    await spares.settled();
    await assert.rejects(stat(path!), { code: 'ENOENT' });
    // Cut where asked (an .xz index), and the slot's old spare removed when a new one replaces it.
    spares.prepare('slot', source, 5, false);
    await spares.settled();
    const cut = spares.held().get('slot')!;
    spares.prepare('slot', source, null, false);
    await spares.settled();
    await assert.rejects(stat(cut), { code: 'ENOENT' });
    const whole = await spares.take('slot', source, null);
    assert.equal(await readFile(whole!, 'utf8'), 'first generation\n');
    assert.equal(spares.held().size, 0, 'taken: the caller owns it');
  });

  it('begins a spare only after its delay, unless an append takes it first', async () => {
    const source = join(tmp.dir, 'delayed', 'object');
    await mkdir(dirname(source), { recursive: true });
    await writeFile(source, 'generation\n');
    const spares = new SpareCopies(150);
    spares.prepare('waits', source, null, true);
    spares.prepare('taken', source, null, true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Nothing copied yet: the fsyncs of whatever follows a publish (the upload's audit entry) do
    // not wait behind the copy's write-back.
    assert.deepEqual((await readdir(dirname(source))).filter((n) => n.endsWith('.spare')), []);
    const taken = await spares.take('taken', source, null);
    assert.equal(await readFile(taken!, 'utf8'), 'generation\n', 'taken before its delay: copied at once');
    await spares.settled();
    assert.equal(await readFile(spares.held().get('waits')!, 'utf8'), 'generation\n');
  });

  it('fails quietly when the source cannot be copied, leaving no file', async () => {
    const spares = new SpareCopies();
    const missing = join(tmp.dir, 'gone', 'object');
    spares.prepare('slot', missing, null, true);
    assert.equal(await spares.take('slot', missing, null), null);
    assert.deepEqual(await readdir(tmp.dir).then((names) => names.filter((n) => n.endsWith('.spare'))), []);
  });

  it('drops the spares of a distribution the writer forgets', async () => {
    const spares = new SpareCopies();
    await publishAptDistribution({ ...options('forgotten', { spares }), entries: [entry(1)] });
    await publishAptDistribution({ ...options('forgotten-too', { spares }), entries: [entry(1)] });
    await aptPublishingSettled(join(tmp.dir, 'apt'), 'forgotten');
    await aptPublishingSettled(join(tmp.dir, 'apt'), 'forgotten-too');
    spares.discardUnder(join(tmp.dir, 'apt', 'dists', 'forgotten', '/'));
    await spares.settled();
    assert.deepEqual(await sparesIn(join(tmp.dir, 'apt', 'dists', 'forgotten')), []);
    assert.equal((await sparesIn(join(tmp.dir, 'apt', 'dists', 'forgotten-too'))).length, 7, 'a distribution whose name starts the same keeps its own');
  });

  it('at shutdown removes the spares made, begins none of those due, and makes none for a publish that finishes after', async () => {
    const folder = join(tmp.dir, 'closing');
    await mkdir(folder, { recursive: true });
    const source = join(folder, 'object');
    await writeFile(source, 'generation\n');
    const spareFiles = async () => (await readdir(folder)).filter((n) => n.endsWith('.spare'));
    const spares = new SpareCopies(300);
    spares.prepare('made', source, null, true);
    await spares.settled();
    assert.equal((await spareFiles()).length, 1);
    spares.prepare('due', source, 5, true);
    const closing = Date.now();
    spares.close();
    spares.prepare('after', source, null, true);
    await spares.settled();
    assert.ok(Date.now() - closing < 250, 'no wait for the spare not begun');
    assert.deepEqual(spares.held(), new Map());
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual(await spareFiles(), [], 'none left for the next start, none begun since');
  });

  it('removes the spares of a process that is gone at start-up, and keeps its own and those of other hosts', async () => {
    const data = join(tmp.dir, 'data');
    const files = new FsPackageFiles(data);
    await files.init();
    const folder = join(data, 'repo', 'apt', 'dists', 'jammy', 'main', 'binary-amd64', 'by-hash', 'SHA256');
    await mkdir(folder, { recursive: true });
    const own = sparePathFor(join(folder, 'a'.repeat(64)));
    const gone = join(folder, basename(own).replace(`-${process.pid}.`, '-999999999.'));
    // Another replica on a shared DATA_DIR: its pid means nothing here.
    const otherHost = join(folder, basename(own).replace(`.${RUN_TAG}-${process.pid}.`, `.${RUN_TAG === 'aaaaaaaa' ? 'bbbbbbbb' : 'aaaaaaaa'}-999999999.`));
    for (const path of [own, gone, otherHost]) await writeFile(path, 'x');
    await files.removeAbandonedTempFiles();
    assert.deepEqual((await readdir(folder)).sort(), [basename(own), basename(otherHost)].sort());
  });
});
