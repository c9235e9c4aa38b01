import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { KeyringStore } from '../../../src/adapters/signing/keyring-store.js';
import type { Signer } from '../../../src/adapters/signing/signer.js';
import type { IndexEntry } from '../../../src/adapters/storage/interfaces.js';
import { RpmIndexWriter } from '../../../src/adapters/storage/rpm-index-writer.js';
import { findDistribution, type Distribution } from '../../../src/domain/distributions.js';
import type { PackageChunks } from '../../../src/domain/repo/rpm/assemble.js';
import { documentXml, DOCUMENT_TYPES } from '../../../src/domain/repo/rpm/gzip-document.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { gpgv } from '../signing/gpg-tools.js';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** A stored entry as packages.index_entry holds it; the writer joins its chunks without parsing them. */
function entry(i: number, arch = i % 4 === 0 ? 'noarch' : 'x86_64'): IndexEntry {
  const name = `pkg-${i}`;
  const chunks: PackageChunks = {
    key: { name, epoch: null, version: '1.0', release: '1.el9', arch, location: `Packages/p/${name}-1.0-1.el9.${arch}.rpm` },
    primary: `<package type="rpm"><name>${name}</name><arch>${arch}</arch></package>\n`,
    filelists: `<package pkgid="${sha256(name)}" name="${name}" arch="${arch}"><file>/usr/bin/${name}</file></package>\n`,
    other: `<package pkgid="${sha256(name)}" name="${name}" arch="${arch}"/>\n`,
  };
  return { component: 'main', arch, text: JSON.stringify(chunks) };
}
const entries = (from: number, to: number, arch?: string) => Array.from({ length: to - from }, (_, k) => entry(from + k, arch));

async function* inBatches(all: readonly IndexEntry[], size: number) {
  for (let i = 0; i < all.length; i += size) yield all.slice(i, i + size);
}

interface Tree {
  repomd: string;
  /** Per document: the uncompressed XML. */
  documents: Record<string, string>;
  files: string[];
}

/** Reads a published tree, checking that repomd.xml describes each file it names and that its signature verifies. */
async function readTree(root: string, keyring: string): Promise<Tree> {
  const repodata = join(root, 'repodata');
  const repomd = await readFile(join(repodata, 'repomd.xml'), 'utf8');
  const verified = gpgv(keyring, join(repodata, 'repomd.xml.asc'), join(repodata, 'repomd.xml'));
  assert.equal(verified.status, 0, verified.stderr);
  const documents: Record<string, string> = {};
  for (const [, type, checksum, openChecksum, href, size, openSize] of repomd.matchAll(
    /<data type="(\w+)">\s*<checksum type="sha256">(\w+)<\/checksum>\s*<open-checksum type="sha256">(\w+)<\/open-checksum>\s*<location href="([^"]+)"\/>\s*<timestamp>\d+<\/timestamp>\s*<size>(\d+)<\/size>\s*<open-size>(\d+)<\/open-size>/g,
  )) {
    const data = await readFile(join(root, href!));
    const open = gunzipSync(data);
    assert.equal(sha256(data), checksum, `${type} checksum`);
    assert.equal(href, `repodata/${checksum}-${type}.xml.gz`);
    assert.equal(sha256(open), openChecksum, `${type} open-checksum`);
    assert.equal(data.length, Number(size));
    assert.equal(open.length, Number(openSize));
    documents[type!] = open.toString('utf8');
  }
  assert.deepEqual(Object.keys(documents), ['primary', 'filelists', 'other']);
  return { repomd, documents, files: (await readdir(repodata)).sort() };
}

/** The documents a tree listing `listed` (in this order) must hold. */
const expected = (listed: readonly IndexEntry[]) =>
  Object.fromEntries(DOCUMENT_TYPES.map((type) => [type, documentXml(type, listed.map((e) => (JSON.parse(e.text) as PackageChunks)[type]))]));

describe('RpmIndexWriter', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => undefined;
  let signer: Signer;
  let keyring = '';
  const rocky: Distribution = findDistribution('rocky9')!;
  const twoArch: Distribution = { ...rocky, codename: 'rocky9-multi', architectures: ['x86_64', 'aarch64'] };

  before(async () => {
    ({ dir, cleanup } = await makeTempDir());
    const store = new KeyringStore({
      dir: join(dir, 'keys'), publicDir: join(dir, 'public'), passphrase: 'pw',
      defaults: { name: 'Tollgate RPM Writer Test', email: 'repo@example.com', type: 'ed25519' },
    });
    signer = await store.ensureKey();
    keyring = join(dir, 'public', 'tollgate.gpg');
  });
  after(() => cleanup());

  it('streams a full write in batches, then appends: each generation lists the packages in order and is what a full write of them gives', async () => {
    const repo = join(dir, 'single');
    const root = join(repo, 'rpm', 'rocky9', 'x86_64');
    const writer = new RpmIndexWriter(repo);
    const all = entries(0, 1234);
    await writer.writeBatches(rocky, inBatches(all, 500), signer);
    const full = await readTree(root, keyring);
    assert.deepEqual(full.documents, expected(all));
    assert.ok(!full.documents.primary!.includes('packages='), 'no package count on the root element');

    const listed = [...all];
    const generations = [full];
    for (const added of [entries(1234, 1235), entries(1235, 1240), entries(1240, 1241, 'noarch')]) {
      assert.equal(await writer.append(rocky, added, signer), true);
      listed.push(...added);
      const tree = await readTree(root, keyring);
      assert.deepEqual(tree.documents, expected(listed));
      generations.push(tree);
    }

    // The same packages written in full by a fresh writer: the same XML, so the same open-checksums.
    const fresh = join(dir, 'fresh');
    await new RpmIndexWriter(fresh).write(rocky, listed, signer);
    const openChecksums = (repomd: string) => [...repomd.matchAll(/<open-checksum type="sha256">(\w+)</g)].map((m) => m[1]);
    assert.deepEqual(openChecksums((await readTree(join(fresh, 'rpm', 'rocky9', 'x86_64'), keyring)).repomd), openChecksums(generations.at(-1)!.repomd));

    // The last three generations' files stay for clients still reading them; the first is gone
    // once the clean-up after the publish is done.
    await writer.settled('rocky9');
    const names = (t: Tree) => [...t.repomd.matchAll(/href="repodata\/([^"]+)"/g)].map((m) => m[1]!);
    const files = (await readdir(join(root, 'repodata'))).filter((f) => f.endsWith('.xml.gz'));
    assert.deepEqual(files.sort(), generations.slice(1).flatMap(names).sort());
    assert.ok(!(await readdir(join(root, 'repodata'))).some((f) => f.endsWith('.tmp')), 'no temp file left');
  });

  it('does not append what it did not write: nothing written yet, or the tree replaced by another writer since', async () => {
    const repo = join(dir, 'replaced');
    const mine = new RpmIndexWriter(repo);
    assert.equal(await mine.append(rocky, entries(0, 1), signer), false, 'nothing written by this writer yet');
    await mine.write(rocky, entries(0, 10), signer);
    // As replicas do under the publishing lock: the other writes once this one's clean-up is done.
    await mine.settled('rocky9');
    const other = new RpmIndexWriter(repo);
    await other.write(rocky, entries(0, 12), signer);
    assert.equal(await mine.append(rocky, entries(12, 13), signer), false, 'the tree on disk is the other writer\'s');
    assert.deepEqual((await readTree(join(repo, 'rpm', 'rocky9', 'x86_64'), keyring)).documents, expected(entries(0, 12)));
  });

  it('with several architectures, appends only to the trees that list the new packages', async () => {
    const repo = join(dir, 'multi');
    const writer = new RpmIndexWriter(repo);
    const all = [...entries(0, 5, 'x86_64'), ...entries(5, 8, 'aarch64'), ...entries(8, 10, 'noarch')];
    await writer.writeBatches(twoArch, inBatches(all, 4), signer);
    const rootOf = (arch: string) => join(repo, 'rpm', 'rocky9-multi', arch);
    const forArch = (arch: string, list: readonly IndexEntry[]) => list.filter((e) => e.arch === arch || e.arch === 'noarch');
    const arm = await readTree(rootOf('aarch64'), keyring);
    assert.deepEqual(arm.documents, expected(forArch('aarch64', all)));
    const armModified = (await stat(join(rootOf('aarch64'), 'repodata', 'repomd.xml'))).mtimeMs;

    assert.equal(await writer.append(twoArch, entries(10, 11, 'x86_64'), signer), true);
    assert.deepEqual((await readTree(rootOf('x86_64'), keyring)).documents, expected(forArch('x86_64', [...all, ...entries(10, 11, 'x86_64')])));
    assert.equal((await readTree(rootOf('aarch64'), keyring)).repomd, arm.repomd, 'aarch64 not rewritten');
    assert.equal((await stat(join(rootOf('aarch64'), 'repodata', 'repomd.xml'))).mtimeMs, armModified);

    const withNoarch = [...all, ...entries(10, 11, 'x86_64'), ...entries(11, 12, 'noarch')];
    assert.equal(await writer.append(twoArch, entries(11, 12, 'noarch'), signer), true);
    for (const arch of twoArch.architectures) assert.deepEqual((await readTree(rootOf(arch), keyring)).documents, expected(forArch(arch, withNoarch)));

    // Architectures changed since the last write: written in full instead.
    assert.equal(await writer.append({ ...twoArch, architectures: ['x86_64'] }, entries(12, 13, 'x86_64'), signer), false);
  });

  it('a failed append leaves the published tree as it was and no temp file; the next publish is a full write', async () => {
    const repo = join(dir, 'failing');
    const root = join(repo, 'rpm', 'rocky9', 'x86_64');
    const writer = new RpmIndexWriter(repo);
    await writer.write(rocky, entries(0, 20), signer);
    const before = await readTree(root, keyring);
    const broken = new Proxy(signer, {
      get: (target, property, receiver) => (property === 'detachedSign' ? async () => { throw new Error('signing service gone'); } : Reflect.get(target, property, receiver)),
    });
    await assert.rejects(writer.append(rocky, entries(20, 21), broken), /signing service gone/);
    const after = await readTree(root, keyring);
    assert.equal(after.repomd, before.repomd);
    assert.deepEqual(after.documents, before.documents);
    assert.ok(!after.files.some((f) => f.endsWith('.tmp')), after.files.join());
    assert.equal(await writer.append(rocky, entries(20, 21), signer), false, 'what it remembered is dropped');
    await writer.write(rocky, entries(0, 21), signer);
    assert.deepEqual((await readTree(root, keyring)).documents, expected(entries(0, 21)));
  });

  it('a batch that cannot be read leaves no temp file and the tree as it was', async () => {
    const repo = join(dir, 'bad-batch');
    const root = join(repo, 'rpm', 'rocky9', 'x86_64');
    const writer = new RpmIndexWriter(repo);
    await writer.write(rocky, entries(0, 3), signer);
    // The clean-up after that publish writes the history file: let it finish before listing the folder.
    await writer.settled('rocky9');
    const before = await readTree(root, keyring);
    async function* failing() {
      yield entries(3, 6);
      throw new Error('database gone');
    }
    await assert.rejects(writer.writeBatches(rocky, failing(), signer), /database gone/);
    const after = await readTree(root, keyring);
    assert.equal(after.repomd, before.repomd);
    assert.deepEqual(after.files, before.files);
  });
});
