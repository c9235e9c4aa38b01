import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as openpgp from 'openpgp';
import { KeyringStore } from '../../../src/adapters/signing/keyring-store.js';
import type { Signer } from '../../../src/adapters/signing/signer.js';
import { DomainError } from '../../../src/domain/errors.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { dearmor, gpgv, listPackets } from './gpg-tools.js';

const RELEASE = 'Origin: Tollgate\nLabel: Tollgate\nSuite: jammy\nCodename: jammy\n-dash: starts with a dash\nFrom: me\n';

/** Write Release, InRelease and Release.gpg for `signer` into `dir` and return their paths. */
async function signRelease(signer: Signer, dir: string, text = RELEASE): Promise<{ release: string; inRelease: string; releaseGpg: string }> {
  const release = join(dir, 'Release');
  const inRelease = join(dir, 'InRelease');
  const releaseGpg = join(dir, 'Release.gpg');
  await writeFile(release, text);
  await writeFile(inRelease, await signer.clearSign(text));
  await writeFile(releaseGpg, await signer.detachedSign(text));
  return { release, inRelease, releaseGpg };
}

/** Write Release, and InRelease and Release.gpg from `signer.signRelease`, into `dir`; their paths and texts. */
async function signReleaseOnce(signer: Signer, dir: string, text: string) {
  const paths = { release: join(dir, 'Release'), inRelease: join(dir, 'InRelease'), releaseGpg: join(dir, 'Release.gpg') };
  const signed = await signer.signRelease(text);
  await writeFile(paths.release, text);
  await writeFile(paths.inRelease, signed.inRelease);
  await writeFile(paths.releaseGpg, signed.releaseGpg);
  return { ...paths, signed };
}

function makeStore(dir: string, passphrase = 'correct horse battery staple', type: 'rsa' | 'ed25519' = 'ed25519', rsaBits?: number): KeyringStore {
  return new KeyringStore({
    dir: join(dir, 'keys'),
    publicDir: join(dir, 'repo', 'keys'),
    passphrase,
    defaults: { name: 'Tollgate Test', email: 'repo@example.com', type, expiresDays: 30, ...(rsaBits ? { rsaBits } : {}) },
  });
}

describe('KeyringStore with Ed25519', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let store: KeyringStore;
  let signer: Signer;
  before(async () => {
    ({ dir, cleanup } = await makeTempDir());
    store = makeStore(dir);
    assert.equal(store.current(), null);
    signer = await store.ensureKey();
  });
  after(() => cleanup());

  it('describes a v4 EdDSA key with the requested user id and expiry', async () => {
    assert.equal(signer.algorithm, 'ed25519');
    assert.match(signer.fingerprint, /^[0-9A-F]{40}$/);
    assert.equal(signer.keyId, signer.fingerprint.slice(-16));
    assert.deepEqual(signer.userIds, ['Tollgate Test <repo@example.com>']);
    assert.ok(signer.expires);
    assert.equal(Math.round((signer.expires.getTime() - signer.created.getTime()) / 86400_000), 30);
    const packets = listPackets(join(dir, 'repo', 'keys', 'tollgate.gpg'));
    assert.match(packets, /public key packet:\s+version 4, algo 22/);
    assert.doesNotMatch(packets, /sub key packet/, 'a signing-only key has no encryption subkey');
  });

  it('keeps the private key encrypted at rest, readable only by the owner', async () => {
    const file = join(dir, 'keys', `${signer.fingerprint}.key`);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const key = await openpgp.readPrivateKey({ armoredKey: await readFile(file, 'utf8') });
    assert.equal(key.isDecrypted(), false);
    assert.equal((await readFile(join(dir, 'keys', 'active'), 'utf8')).trim(), signer.fingerprint);
  });

  it('signs so that gpgv accepts InRelease and Release.gpg, with SHA-512', async () => {
    const files = await signRelease(signer, dir);
    const keyring = join(dir, 'repo', 'keys', 'tollgate.gpg');
    const clear = gpgv(keyring, files.inRelease);
    assert.equal(clear.status, 0, clear.stderr);
    assert.match(clear.stderr, /Good signature from "Tollgate Test <repo@example.com>"/);
    const detached = gpgv(keyring, files.releaseGpg, files.release);
    assert.equal(detached.status, 0, detached.stderr);
    const inRelease = await readFile(files.inRelease, 'utf8');
    assert.match(inRelease, /^-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n/);
    // Same shape as gpg --clearsign: dash-escaped, no blank line before the armor.
    assert.ok(inRelease.includes('- -dash: starts with a dash\nFrom: me\n-----BEGIN PGP SIGNATURE-----\n'));
    assert.match(listPackets(files.releaseGpg), /signature packet: algo 22[\s\S]*version 4, created \d+, md5len 0, sigclass 0x00[\s\S]*digest algo 10/);
  });

  it('signs a Release once for both InRelease and Release.gpg, which gpgv accepts, the signed text being the whole file', async () => {
    const keyring = join(dir, 'repo', 'keys', 'tollgate.gpg');
    for (const text of [`${RELEASE}Description: any\n`, 'Origin: T\nLabel: T\nCodename: jammy\nSHA256:\n 0123 12 main/binary-amd64/Packages\n']) {
      const { release, inRelease, releaseGpg, signed } = await signReleaseOnce(signer, dir, text);
      const clear = gpgv(keyring, inRelease);
      assert.equal(clear.status, 0, clear.stderr);
      const detached = gpgv(keyring, releaseGpg, release);
      assert.equal(detached.status, 0, detached.stderr);
      // One signature: InRelease's signature block is Release.gpg, a text-mode signature over the
      // whole file, its final line break included (the blank line before the armor).
      assert.ok(signed.inRelease.endsWith(signed.releaseGpg));
      assert.match(signed.inRelease, /\n\n-----BEGIN PGP SIGNATURE-----\n/);
      assert.match(listPackets(releaseGpg), /sigclass 0x01[\s\S]*digest algo 10/);
      assert.equal((signed.releaseGpg.match(/BEGIN PGP SIGNATURE/g) ?? []).length, 1);
      // What a client takes for Release from InRelease is the file, byte for byte.
      assert.equal((await openpgp.readCleartextMessage({ cleartextMessage: signed.inRelease })).getText(), text);
      await writeFile(release, text.replace('jammy', 'noble'));
      assert.notEqual(gpgv(keyring, releaseGpg, release).status, 0);
    }
  });

  it('signs a Release with trailing blanks on a line twice, as a clear signature leaves them out', async () => {
    const { release, inRelease, releaseGpg, signed } = await signReleaseOnce(signer, dir, 'Origin: T \nCodename: jammy\n');
    const keyring = join(dir, 'repo', 'keys', 'tollgate.gpg');
    assert.equal(gpgv(keyring, inRelease).status, 0);
    assert.equal(gpgv(keyring, releaseGpg, release).status, 0);
    assert.match(listPackets(releaseGpg), /sigclass 0x00/);
    assert.ok(!signed.inRelease.endsWith(signed.releaseGpg));
  });

  it('makes gpgv refuse a tampered Release', async () => {
    const files = await signRelease(signer, dir);
    await writeFile(files.release, RELEASE.replace('jammy', 'noble'));
    assert.notEqual(gpgv(join(dir, 'repo', 'keys', 'tollgate.gpg'), files.releaseGpg, files.release).status, 0);
    await writeFile(files.inRelease, (await readFile(files.inRelease, 'utf8')).replace('Suite: jammy', 'Suite: noble'));
    assert.notEqual(gpgv(join(dir, 'repo', 'keys', 'tollgate.gpg'), files.inRelease).status, 0);
  });

  it('exports an armored key that dearmors to a working keyring', async () => {
    const armored = await readFile(join(dir, 'repo', 'keys', 'tollgate.asc'), 'utf8');
    assert.match(armored, /^-----BEGIN PGP PUBLIC KEY BLOCK-----/);
    assert.doesNotMatch(armored, /PRIVATE/);
    const keyring = join(dir, 'dearmored.gpg');
    assert.equal(dearmor(join(dir, 'repo', 'keys', 'tollgate.asc'), keyring).status, 0);
    const files = await signRelease(signer, dir);
    assert.equal(gpgv(keyring, files.inRelease).status, 0);
  });

  it('rotates: the new key signs and is exported, the old one is kept', async () => {
    const old = signer.fingerprint;
    const concurrent = store.ensureKey();
    const rotated = await store.generate({ name: 'Tollgate Rotated' });
    assert.notEqual(rotated.fingerprint, old);
    assert.equal((await concurrent).fingerprint, old);
    assert.equal(store.current()?.fingerprint, rotated.fingerprint);
    assert.equal(await store.keyCount(), 2);
    const listed = await store.list();
    assert.deepEqual(listed.map((k) => [k.fingerprint, k.active]), [[rotated.fingerprint, true], [old, false]]);

    const files = await signRelease(rotated, dir);
    const keyring = join(dir, 'repo', 'keys', 'tollgate.gpg');
    const res = gpgv(keyring, files.inRelease);
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stderr, /Tollgate Rotated/);
    // Until the files signed with the old key are re-signed, the exported keyring holds both, new first.
    const both = Buffer.from(await readFile(keyring));
    assert.ok(both.subarray(0, rotated.publicKeyBinary.length).equals(Buffer.from(rotated.publicKeyBinary)));
    assert.ok(both.length > rotated.publicKeyBinary.length);
    assert.equal((await readFile(join(dir, 'repo', 'keys', 'tollgate.asc'), 'utf8')).match(/BEGIN PGP PUBLIC KEY BLOCK/g)?.length, 2);
    await store.exportPublicKeys([]);
    assert.ok(Buffer.from(await readFile(keyring)).equals(Buffer.from(rotated.publicKeyBinary)));
    assert.equal((await readFile(join(dir, 'repo', 'keys', 'tollgate.asc'), 'utf8')).match(/BEGIN PGP PUBLIC KEY BLOCK/g)?.length, 1);

    // A restarted service loads the active key instead of generating one.
    const reopened = makeStore(dir);
    assert.equal((await reopened.ensureKey()).fingerprint, rotated.fingerprint);
    assert.equal(await reopened.keyCount(), 2);
  });

  it('refuses to unlock with the wrong passphrase', async () => {
    await assert.rejects(makeStore(dir, 'wrong passphrase').ensureKey(), (err: unknown) => {
      assert.ok(err instanceof DomainError);
      assert.equal(err.code, 'signing_key_locked');
      return true;
    });
  });

  it('validates key options', () => {
    assert.throws(() => new KeyringStore({ dir, publicDir: dir, passphrase: 'x', defaults: { name: 'a', email: 'not-an-email' } }),
      (err: unknown) => err instanceof DomainError && err.code === 'invalid_key_options');
  });
});

describe('KeyringStore with RSA (default type)', () => {
  it('generates RSA-4096 in a worker without stalling the event loop, and gpgv accepts its signatures', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const store = new KeyringStore({
      dir: join(dir, 'keys'), publicDir: join(dir, 'pub'), passphrase: 'secret',
      defaults: { name: 'Tollgate RSA', email: 'rsa@example.com' },
    });
    let last = performance.now();
    let maxGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
    }, 10);
    const started = performance.now();
    const signer = await store.ensureKey();
    clearInterval(timer);
    t.diagnostic(`rsa-4096 ensureKey took ${Math.round(performance.now() - started)} ms; max event-loop gap ${Math.round(maxGap)} ms`);
    assert.ok(maxGap < 1000, `event loop blocked for ${Math.round(maxGap)} ms`);
    assert.equal(signer.algorithm, 'rsa4096');
    assert.equal(signer.expires, null);
    const files = await signRelease(signer, dir);
    const keyring = join(dir, 'pub', 'tollgate.gpg');
    assert.equal(gpgv(keyring, files.inRelease).status, 0);
    assert.equal(gpgv(keyring, files.releaseGpg, files.release).status, 0);
    assert.match(listPackets(files.releaseGpg), /signature packet: algo 1[\s\S]*digest algo 10/);
    const once = await signReleaseOnce(signer, dir, 'Origin: T\nCodename: jammy\n');
    assert.equal(gpgv(keyring, once.inRelease).status, 0);
    assert.equal(gpgv(keyring, once.releaseGpg, once.release).status, 0);
    assert.ok(once.signed.inRelease.endsWith(once.signed.releaseGpg), 'one RSA signature for both');
  });
});

describe('KeyringStore shared by replicas', () => {
  it('replicas starting together on an empty folder make one key; a rotation by one is taken up by the other', async () => {
    const { dir, cleanup } = await makeTempDir();
    const replicas = [makeStore(dir), makeStore(dir), makeStore(dir)];
    const first = await Promise.all(replicas.map((r) => r.ensureKey()));
    assert.equal(new Set(first.map((s) => s.fingerprint)).size, 1, 'one key for all');
    assert.equal(await replicas[0]!.keyCount(), 1);

    const rotated = await replicas[0]!.generate({ name: 'Tollgate Rotated' });
    // The others compare the shared `active` with their key every two seconds at most.
    await new Promise((r) => setTimeout(r, 2100));
    for (const other of replicas.slice(1)) assert.equal((await other.ensureKey()).fingerprint, rotated.fingerprint);
    const files = await signRelease(await replicas[2]!.ensureKey(), dir);
    assert.equal(gpgv(join(dir, 'repo', 'keys', 'tollgate.gpg'), files.inRelease).status, 0);
    await cleanup();
  });
});
