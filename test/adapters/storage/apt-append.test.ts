import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KeyringStore } from '../../../src/adapters/signing/keyring-store.js';
import type { Signer } from '../../../src/adapters/signing/signer.js';
import { appendAptDistribution, publishAptDistribution, type AptPublishOptions } from '../../../src/adapters/storage/apt-publisher.js';
import { makeTempDir } from '../../helpers/tmp.js';

const stanza = (i: number) => `Package: app-${i}\nVersion: 1.${i}\nArchitecture: amd64\nFilename: pool/main/a/app-${i}/app-${i}_1.${i}_amd64.deb\nSize: ${100 + i}\nDescription: app ${i}\n`;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('appending to a published APT index', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let signer: Signer;
  before(async () => {
    tmp = await makeTempDir('tollgate-append-');
    const store = new KeyringStore({ dir: join(tmp.dir, 'keys'), publicDir: join(tmp.dir, 'pub'), passphrase: 'test-passphrase', defaults: { name: 'T', email: 't@example.org', type: 'ed25519' } });
    signer = await store.ensureKey();
  });
  after(() => tmp.cleanup());

  const options = (stanzas: string[], extra: Partial<AptPublishOptions> = {}): AptPublishOptions => ({
    repoRoot: join(tmp.dir, 'apt'), codename: 'jammy', stanzas, signer, origin: 'T', label: 'T', sync: false, ...extra,
  });

  it('produces the same Packages as a full write, in files that decode and match the Release', async () => {
    const full = await publishAptDistribution(options([stanza(0), stanza(1)]));
    const a = await appendAptDistribution({ ...options([stanza(2)]), previous: full.state });
    const b = await appendAptDistribution({ ...options([stanza(3), stanza(4)]), previous: a!.state });
    assert.equal(b!.mode, 'append');
    const dir = join(tmp.dir, 'apt', 'dists', 'jammy', 'main', 'binary-amd64');
    const plain = await readFile(join(dir, 'Packages'));
    assert.equal(plain.toString(), [0, 1, 2, 3, 4].map((i) => `${stanza(i)}\n`).join(''));
    assert.ok(execFileSync('gzip', ['-dc', join(dir, 'Packages.gz')]).equals(plain));
    assert.ok(execFileSync('xz', ['-dc', join(dir, 'Packages.xz')]).equals(plain));
    const release = await readFile(join(tmp.dir, 'apt', 'dists', 'jammy', 'Release'), 'utf8');
    for (const name of ['Packages', 'Packages.gz', 'Packages.xz']) {
      const bytes = await readFile(join(dir, name));
      assert.match(release, new RegExp(`^ ${sha256(bytes)} +${bytes.length} main/binary-amd64/${name.replace('.', '\\.')}$`, 'm'), name);
      assert.ok((await readFile(join(dir, 'by-hash', 'SHA256', sha256(bytes)))).equals(bytes), `by-hash object of ${name}`);
    }
  });

  it('appends to a Packages.xz larger than the tail the full write keeps of it', async () => {
    // ~2 MB of barely compressible text: the .xz (over 1 MB, several blocks) arrives in many
    // chunks, so the writer hashes all but its last 256 KiB as it goes and finds the xz index there.
    const big = (i: number) => `${stanza(i)} ${randomBytes(500).toString('hex')}\n`;
    const stanzas = Array.from({ length: 2000 }, (_, i) => big(100 + i));
    const opts = (list: string[]) => options(list, { codename: 'bionic' });
    const full = await publishAptDistribution(opts(stanzas));
    const dir = join(tmp.dir, 'apt', 'dists', 'bionic', 'main', 'binary-amd64');
    assert.ok((await readFile(join(dir, 'Packages.xz'))).length > 1 << 20, 'the .xz is larger than the kept tail');
    const extra = big(5000);
    const added = await appendAptDistribution({ ...opts([extra]), previous: full.state });
    assert.equal(added?.mode, 'append');
    const plain = await readFile(join(dir, 'Packages'));
    assert.equal(plain.toString(), [...stanzas, extra].map((t) => `${t}\n`).join(''));
    assert.ok(execFileSync('xz', ['-dc', join(dir, 'Packages.xz')], { maxBuffer: 64 << 20 }).equals(plain));
    const xz = await readFile(join(dir, 'Packages.xz'));
    const release = await readFile(join(tmp.dir, 'apt', 'dists', 'bionic', 'Release'), 'utf8');
    assert.match(release, new RegExp(`^ ${sha256(xz)} +${xz.length} main/binary-amd64/Packages\\.xz$`, 'm'));
  });

  it('stops appending after maxAppends so the next publish recompresses everything', async () => {
    const full = await publishAptDistribution(options([stanza(10)], { maxAppends: 1 }));
    const first = await appendAptDistribution({ ...options([stanza(11)], { maxAppends: 1 }), previous: full.state });
    assert.equal(first?.mode, 'append');
    const second = await appendAptDistribution({ ...options([stanza(12)], { maxAppends: 1 }), previous: first!.state });
    assert.equal(second, null, 'the caller must publish in full');
  });
});
