/**
 * A streamed write that fails part-way must fail as one error, never also as an unhandled
 * rejection of one of its inner pipelines: Node stops the process on those. Found by the
 * disk-full fault test, where a full disk under one of the index's temp files brought the
 * service down about one run in four.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { KeyringStore } from '../../../src/adapters/signing/keyring-store.js';
import { writeContentsFile } from '../../../src/adapters/storage/apt-contents-files.js';
import { appendAptDistribution, publishAptDistribution } from '../../../src/adapters/storage/apt-publisher.js';
import { writeFullIndex, type IndexFileOptions } from '../../../src/adapters/storage/apt-index-files.js';
import { RpmIndexWriter } from '../../../src/adapters/storage/rpm-index-writer.js';
import { findDistribution } from '../../../src/domain/distributions.js';
import { catalogue } from '../../../src/services/sbom/payload.js';
import { exec } from '../../helpers/apt.js';
import { makeTempDir } from '../../helpers/tmp.js';

const options: IndexFileOptions = { maxAppends: 4, gzipLevel: 1, xz: { preset: 0, threads: 1 }, sync: false };

/** One batch, then the failure a database read or a full disk would raise. */
async function* failingBatches(): AsyncGenerator<readonly string[]> {
  yield ['Package: a\nVersion: 1.0\n\n'];
  await new Promise((resolve) => setTimeout(resolve, 5));
  throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
}

/** Lets every stream's close and every pending rejection run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe('a streamed write that fails part-way', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  before(async () => {
    tmp = await makeTempDir('tollgate-failed-writes-');
  });
  after(() => tmp.cleanup());
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
  });

  it('a full Packages write rejects with the failure, leaves no temp file and no unhandled rejection', async () => {
    const dir = join(tmp.dir, 'packages');
    await assert.rejects(writeFullIndex(dir, failingBatches(), options), /no space left/);
    await settle();
    assert.deepEqual(unhandled, []);
    assert.deepEqual(await readdir(join(dir, 'by-hash', 'SHA256')), []);
  });

  it('a Contents write rejects with the failure, leaves no temp file and no unhandled rejection', async () => {
    const dir = join(tmp.dir, 'contents');
    await assert.rejects(writeContentsFile(dir, 'amd64', failingBatches(), options), /no space left/);
    await settle();
    assert.deepEqual(unhandled, []);
    assert.deepEqual(await readdir(join(dir, 'by-hash', 'SHA256')), []);
  });

  it("an SBOM's payload walk over a corrupt data.tar answers why, with no unhandled rejection", async () => {
    // A gzip stream that starts well and breaks in the middle of the tar.
    const good = gzipSync(Buffer.alloc(64 * 1024, 0x61));
    const broken = Buffer.concat([good.subarray(0, good.length / 2), Buffer.alloc(4096, 0xff)]);
    const file = join(tmp.dir, 'broken.deb');
    await writeFile(file, broken);
    const inventory = await catalogue(file, { format: 'deb', name: 'broken', metadata: { members: [{ name: 'data.tar.gz', offset: 0, size: broken.length }] } });
    await settle();
    assert.match(inventory.error ?? '', /payload not fully read/);
    assert.deepEqual(unhandled, []);
  });
});

describe('a streamed write on a full disk', { skip: process.getuid?.() === 0 ? false : 'needs root to mount a tmpfs' }, () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let mount = '';
  let refused = '';
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  before(async () => {
    tmp = await makeTempDir('tollgate-full-writes-');
    mount = join(tmp.dir, 'fs');
    await mkdir(mount);
    const mounted = await exec('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mount]);
    if (mounted.code !== 0) refused = mounted.stderr.trim() || 'mount refused';
    process.on('unhandledRejection', record);
  });
  after(async () => {
    process.off('unhandledRejection', record);
    if (!refused) await exec('umount', ['-l', mount]);
    await tmp.cleanup();
  });

  /** Incompressible stanzas: each of the three files outgrows the filesystem on its own. */
  async function* largeBatches(): AsyncGenerator<readonly string[]> {
    for (let i = 0; i < 64; i++) yield [`Package: p${i}\nVersion: 1.0\nDescription: ${randomBytes(16 * 1024).toString('base64')}\n\n`];
  }

  it('Packages: rejects with ENOSPC, nothing left behind, no unhandled error; again and again', async (t) => {
    if (refused) return t.skip(`cannot mount a tmpfs: ${refused}`);
    // The moment each of the three writers meets the full disk varies between runs.
    for (let run = 0; run < 10; run++) {
      const dir = join(mount, `packages-${run}`);
      await assert.rejects(writeFullIndex(dir, largeBatches(), options), (e: NodeJS.ErrnoException) => e.code === 'ENOSPC');
      await settle();
      assert.deepEqual(await readdir(join(dir, 'by-hash', 'SHA256')), [], `run ${run}`);
    }
    assert.deepEqual(unhandled, []);
  });

  it('Contents: rejects with ENOSPC, nothing left behind, no unhandled error', async (t) => {
    if (refused) return t.skip(`cannot mount a tmpfs: ${refused}`);
    for (let run = 0; run < 5; run++) {
      const dir = join(mount, `contents-${run}`);
      await assert.rejects(writeContentsFile(dir, 'amd64', largeBatches(), options), (e: NodeJS.ErrnoException) => e.code === 'ENOSPC');
      await settle();
      assert.deepEqual(await readdir(join(dir, 'by-hash', 'SHA256')), [], `run ${run}`);
    }
    assert.deepEqual(unhandled, []);
  });

  it('an append that meets the full disk while Release is signed rejects, leaves Release as it was, no unhandled error', async (t) => {
    if (refused) return t.skip(`cannot mount a tmpfs: ${refused}`);
    const store = new KeyringStore({ dir: join(tmp.dir, 'keys'), publicDir: join(tmp.dir, 'pub'), passphrase: 'test-passphrase', defaults: { name: 'T', email: 't@example.org', type: 'ed25519' } });
    const signer = await store.ensureKey();
    const base = { repoRoot: join(mount, 'apt'), codename: 'jammy', signer, origin: 'T', label: 'T', sync: false };
    const stanza = (i: number) => `Package: app-${i}\nVersion: 1.0\nArchitecture: amd64\nFilename: pool/main/a/app-${i}.deb\nSize: 1\n`;
    const full = await publishAptDistribution({ ...base, stanzas: [stanza(0)] });
    const dist = join(mount, 'apt', 'dists', 'jammy');
    const before = await Promise.all(['Release', 'InRelease', 'Release.gpg'].map((name) => readFile(join(dist, name))));
    // Whatever room is left goes to a filler: the appended files' copies cannot be written.
    await writeFile(join(mount, 'filler'), randomBytes(1024 * 1024)).catch((e: NodeJS.ErrnoException) => assert.equal(e.code, 'ENOSPC'));
    await assert.rejects(appendAptDistribution({ ...base, stanzas: [stanza(1)], previous: full.state }), (e: NodeJS.ErrnoException) => e.code === 'ENOSPC');
    await settle();
    assert.deepEqual(unhandled, []);
    const now = await Promise.all(['Release', 'InRelease', 'Release.gpg'].map((name) => readFile(join(dist, name))));
    now.forEach((bytes, i) => assert.ok(bytes.equals(before[i]!), 'Release, InRelease and Release.gpg unchanged'));
  });

  /** An RPM entry whose chunks do not compress: a few of them outgrow the filesystem. */
  const rpmEntry = (i: number) => {
    const noise = randomBytes(16 * 1024).toString('base64');
    const key = { name: `r${i}`, epoch: null, version: '1.0', release: '1', arch: 'x86_64', location: `Packages/r/r${i}.rpm` };
    return { component: 'main', arch: 'x86_64', text: JSON.stringify({ key, primary: `<package><name>r${i}</name><description>${noise}</description></package>\n`, filelists: '', other: '' }) };
  };
  const rocky = findDistribution('rocky9')!;

  it('RPM repodata: a streamed full write rejects with ENOSPC, nothing left behind, no unhandled error', async (t) => {
    if (refused) return t.skip(`cannot mount a tmpfs: ${refused}`);
    const store = new KeyringStore({ dir: join(tmp.dir, 'rpm-keys'), publicDir: join(tmp.dir, 'rpm-pub'), passphrase: 'test-passphrase', defaults: { name: 'T', email: 't@example.org', type: 'ed25519' } });
    const signer = await store.ensureKey();
    for (let run = 0; run < 5; run++) {
      const repo = join(mount, `rpm-full-${run}`);
      async function* batches() {
        for (let i = 0; i < 64; i++) yield [rpmEntry(i)];
      }
      await assert.rejects(new RpmIndexWriter(repo, { sync: false }).writeBatches(rocky, batches(), signer), (e: NodeJS.ErrnoException) => e.code === 'ENOSPC');
      await settle();
      assert.deepEqual(await readdir(join(repo, 'rpm', 'rocky9', 'x86_64', 'repodata')), [], `run ${run}`);
      await rm(repo, { recursive: true, force: true });
    }
    assert.deepEqual(unhandled, []);
  });

  it('RPM repodata: an append on a full disk rejects, leaves repomd.xml as it was, no unhandled error', async (t) => {
    if (refused) return t.skip(`cannot mount a tmpfs: ${refused}`);
    const store = new KeyringStore({ dir: join(tmp.dir, 'rpm-keys'), publicDir: join(tmp.dir, 'rpm-pub'), passphrase: 'test-passphrase', defaults: { name: 'T', email: 't@example.org', type: 'ed25519' } });
    const signer = await store.ensureKey();
    await rm(join(mount, 'filler'), { force: true });
    const repo = join(mount, 'rpm-append');
    const writer = new RpmIndexWriter(repo, { sync: false });
    await writer.write(rocky, [rpmEntry(0)], signer);
    await writer.settled('rocky9');
    const repodata = join(repo, 'rpm', 'rocky9', 'x86_64', 'repodata');
    const before = await Promise.all(['repomd.xml', 'repomd.xml.asc'].map((name) => readFile(join(repodata, name))));
    const files = (await readdir(repodata)).sort();
    await writeFile(join(mount, 'filler'), randomBytes(1024 * 1024)).catch((e: NodeJS.ErrnoException) => assert.equal(e.code, 'ENOSPC'));
    await assert.rejects(writer.append(rocky, [rpmEntry(1), rpmEntry(2)], signer), (e: NodeJS.ErrnoException) => e.code === 'ENOSPC');
    await settle();
    assert.deepEqual(unhandled, []);
    const now = await Promise.all(['repomd.xml', 'repomd.xml.asc'].map((name) => readFile(join(repodata, name))));
    now.forEach((bytes, i) => assert.ok(bytes.equals(before[i]!), 'repomd.xml and its signature unchanged'));
    assert.deepEqual((await readdir(repodata)).sort(), files, 'no temp file, no new document');
  });
});
