import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KeyringStore } from '../../../src/adapters/signing/keyring-store.js';
import type { Signer } from '../../../src/adapters/signing/signer.js';
import { aptPublishingSettled, publishAptDistribution } from '../../../src/adapters/storage/apt-publisher.js';
import { debPoolPath } from '../../../src/domain/repo/apt/pool-path.js';
import { packageStanza } from '../../../src/domain/repo/apt/stanza.js';
import { aptSandbox } from '../../helpers/apt.js';
import { buildDeb, type DebSpec } from '../../../harness/debs.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { controlFieldsOf, fileFacts, ftparchivePackages } from '../../domain/repo/apt/apt-ftparchive.js';
import { gpgv } from '../signing/gpg-tools.js';

const SPECS: DebSpec[] = [
  { name: 'hello', version: '1:2.10-1', depends: 'data-common (>= 3.0)', description: 'say hello\nA friendly program.' },
  { name: 'data-common', version: '3.0', arch: 'all' },
  { name: 'libfoo1', version: '0.9-2', source: 'libfoo' },
];

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

describe('publishAptDistribution', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let aptRoot: string;
  let keyring: string;
  let signer: Signer;
  const stanzas = new Map<string, string>();
  const poolFiles = new Map<string, string>();

  before(async () => {
    ({ dir, cleanup } = await makeTempDir());
    aptRoot = join(dir, 'repo', 'apt');
    const store = new KeyringStore({
      dir: join(dir, 'keys'), publicDir: join(dir, 'repo', 'keys'), passphrase: 'pw',
      defaults: { name: 'Tollgate Publisher Test', email: 'repo@example.com', type: 'ed25519' },
    });
    signer = await store.ensureKey();
    keyring = join(dir, 'repo', 'keys', 'tollgate.gpg');
    await mkdir(join(dir, 'build'));
    for (const spec of SPECS) {
      const built = await buildDeb(join(dir, 'build'), spec);
      const fields = await controlFieldsOf(built);
      const rel = debPoolPath({ name: spec.name, version: spec.version, architecture: spec.arch ?? 'amd64', source: spec.source });
      const facts = await fileFacts(built, rel);
      await mkdir(dirname(join(aptRoot, rel)), { recursive: true });
      await rename(built, join(aptRoot, rel));
      stanzas.set(spec.name, packageStanza(fields, facts));
      poolFiles.set(spec.name, rel);
    }
  });
  after(() => cleanup());

  const publish = (names: string[], extra: Partial<Parameters<typeof publishAptDistribution>[0]> = {}) =>
    publishAptDistribution({
      repoRoot: aptRoot, codename: 'jammy', stanzas: names.sort().map((n) => stanzas.get(n) as string), signer,
      origin: 'Tollgate', label: 'Tollgate', description: 'Tollgate test repository', ...extra,
    });

  it('writes signed, consistent indexes that gpgv and apt-ftparchive agree with', async () => {
    const result = await publish(['hello', 'data-common', 'libfoo1']);
    const dist = join(aptRoot, 'dists', 'jammy');
    const index = join(dist, 'main', 'binary-amd64');
    const plain = await readFile(join(index, 'Packages'));
    assert.equal(plain.toString(), await ftparchivePackages(aptRoot).then((t) => sortStanzas(t)));
    assert.ok(execFileSync('gzip', ['-dc', join(index, 'Packages.gz')]).equals(plain));
    assert.ok(execFileSync('xz', ['-dc', join(index, 'Packages.xz')]).equals(plain));
    assert.ok((await stat(join(index, 'Packages.xz'))).size < plain.length, 'xz really compresses');

    const release = await readFile(join(dist, 'Release'), 'utf8');
    assert.equal(release, result.release);
    assert.match(release, /^Acquire-By-Hash: yes$/m);
    for (const name of ['Packages', 'Packages.gz', 'Packages.xz']) {
      const data = await readFile(join(index, name));
      assert.match(release, new RegExp(`^ ${sha256(data)} +${data.length} main/binary-amd64/${name.replace('.', '\\.')}$`, 'm'));
      for (const [algoDir, algo] of [['MD5Sum', 'md5'], ['SHA1', 'sha1'], ['SHA256', 'sha256'], ['SHA512', 'sha512']]) {
        const hex = createHash(algo as string).update(data).digest('hex');
        assert.ok((await readFile(join(index, 'by-hash', algoDir as string, hex))).equals(data), `${algoDir} by-hash copy of ${name}`);
      }
    }
    const clear = gpgv(keyring, join(dist, 'InRelease'));
    assert.equal(clear.status, 0, clear.stderr);
    const detached = gpgv(keyring, join(dist, 'Release.gpg'), join(dist, 'Release'));
    assert.equal(detached.status, 0, detached.stderr);
    assert.ok((await readFile(join(dist, 'InRelease'), 'utf8')).includes(release.trimEnd()));
  });

  it('is accepted by a real apt-get update, and apt-get download fetches the pool file', async (t) => {
    await publish(['hello', 'data-common', 'libfoo1']);
    const apt = await aptSandbox(join(dir, 'apt-client'));
    await apt.setSource(`deb [signed-by=${keyring}] file:${aptRoot} jammy main`);
    const update = await apt.update();
    assert.equal(update.code, 0, update.stdout + update.stderr);
    assert.doesNotMatch(update.stdout + update.stderr, /^(W|E):/m);
    const show = await apt.show('hello');
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /^Version: 1:2\.10-1$/m);
    assert.match((await apt.show('data-common')).stdout, /^Architecture: all$/m);
    const download = await apt.download('hello');
    assert.equal(download.code, 0, download.stderr);
    const [file] = await readdir(join(apt.dir, 'downloads'));
    assert.ok(file);
    const fetched = await readFile(join(apt.dir, 'downloads', file));
    assert.equal(sha256(fetched), sha256(await readFile(join(aptRoot, poolFiles.get('hello') as string))));

    // A republish without libfoo1: apt sees the change, old by-hash files stay for clients mid-update.
    const before = await readdir(join(aptRoot, 'dists', 'jammy', 'main', 'binary-amd64', 'by-hash', 'SHA256'));
    await publish(['hello', 'data-common']);
    const afterFiles = await readdir(join(aptRoot, 'dists', 'jammy', 'main', 'binary-amd64', 'by-hash', 'SHA256'));
    assert.ok(before.every((f) => afterFiles.includes(f)));
    assert.equal(afterFiles.length, before.length + 3);
    const again = await apt.update();
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.notEqual((await apt.show('libfoo1')).code, 0);
    t.diagnostic('apt-get update accepted both generations');

    // apt refuses an index whose signature does not match (so the test above can fail).
    const inRelease = join(aptRoot, 'dists', 'jammy', 'InRelease');
    await writeFile(inRelease, (await readFile(inRelease, 'utf8')).replace('Label: Tollgate', 'Label: Tampered'));
    const tampered = await apt.update();
    assert.match(tampered.stdout + tampered.stderr, /BADSIG|not signed|invalid|NO_PUBKEY|Signature/i);
    await publish(['hello', 'data-common']);
  });

  it('keeps the last generations of by-hash files and prunes older ones', async () => {
    const index = join(aptRoot, 'dists', 'jammy', 'main', 'binary-amd64');
    const sets = [['hello'], ['data-common'], ['libfoo1'], ['hello', 'libfoo1'], ['data-common', 'libfoo1']];
    const published: string[][] = [];
    for (const names of sets) {
      const r = await publish(names, { keepGenerations: 3, byHashMinAgeSeconds: 0, sync: false });
      published.push(r.files.filter((f) => f.path.startsWith('main/binary-amd64/')).map((f) => f.sha256));
    }
    // Pruning runs after each publish has answered, before the next one starts.
    await aptPublishingSettled(aptRoot, 'jammy');
    const present = new Set(await readdir(join(index, 'by-hash', 'SHA256')));
    const kept = published.slice(-3).flat();
    for (const h of kept) assert.ok(present.has(h), `kept ${h}`);
    for (const h of published.slice(0, 2).flat()) assert.ok(!present.has(h), `pruned ${h}`);
    assert.equal(present.size, new Set(kept).size);
    assert.equal((await readdir(join(index, 'by-hash', 'MD5Sum'))).length, new Set(kept).size);
  });

  it('serialises concurrent publishes of one distribution: the last one wins, consistently', async () => {
    const [first, second] = await Promise.all([publish(['hello']), publish(['libfoo1', 'data-common'])]);
    assert.notEqual(first.release, second.release);
    const dist = join(aptRoot, 'dists', 'jammy');
    assert.equal(await readFile(join(dist, 'Release'), 'utf8'), second.release);
    assert.equal(gpgv(keyring, join(dist, 'InRelease')).status, 0);
    assert.equal(gpgv(keyring, join(dist, 'Release.gpg'), join(dist, 'Release')).status, 0);
    const packages = await readFile(join(dist, 'main', 'binary-amd64', 'Packages'), 'utf8');
    assert.match(packages, /^Package: libfoo1$/m);
    assert.doesNotMatch(packages, /^Package: hello$/m);
  });

  it('publishes an empty distribution that apt accepts', async () => {
    await publishAptDistribution({ repoRoot: aptRoot, codename: 'noble', stanzas: [], signer, origin: 'Tollgate', label: 'Tollgate', validForSeconds: 7 * 86400 });
    const release = await readFile(join(aptRoot, 'dists', 'noble', 'Release'), 'utf8');
    assert.match(release, /^Valid-Until: /m);
    const apt = await aptSandbox(join(dir, 'apt-client-noble'));
    await apt.setSource(`deb [signed-by=${keyring}] file:${aptRoot} noble main`);
    const update = await apt.update();
    assert.equal(update.code, 0, update.stdout + update.stderr);
  });
});

/** apt-ftparchive lists in directory order; the publisher's input is sorted by name. */
function sortStanzas(text: string): string {
  const stanzas = text.split(/\n\n/).filter((s) => s.trim() !== '');
  const name = (s: string): string => /^Package: (.+)$/m.exec(s)?.[1] ?? '';
  return stanzas.sort((a, b) => (name(a) < name(b) ? -1 : 1)).map((s) => `${s}\n\n`).join('');
}
