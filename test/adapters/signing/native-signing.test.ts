import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as openpgp from 'openpgp';
import { armoredSignature } from '../../../src/adapters/signing/native-signing.js';
import { OPENPGP_CONFIG, OpenPgpSigner } from '../../../src/adapters/signing/openpgp-signer.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { gpgv, listPackets } from './gpg-tools.js';

const RELEASE = 'Origin: Tollgate\nLabel: Tollgate\nCodename: jammy\nDate: Sat, 28 Nov 2026 04:00:00 UTC\nSHA256:\n 0123abcd 1234 main/binary-amd64/Packages\n';

/** An RSA key whose signing is done by a subkey (as many operators' imported keys are). */
async function rsaKeyWithSigningSubkey(options: { date?: Date; keyExpirationTime?: number } = {}) {
  const { privateKey, publicKey } = await openpgp.generateKey({
    type: 'rsa', rsaBits: 3072, userIDs: [{ name: 'Native RSA', email: 'rsa@example.com' }], passphrase: 'pw',
    subkeys: [{ sign: true }], format: 'armored', config: { v6Keys: false }, ...options,
  });
  const signingSubkey = await (await openpgp.readKey({ armoredKey: publicKey })).getSigningKey(undefined, options.date);
  return { privateKey, publicKey, signingFingerprint: signingSubkey.getFingerprint().toUpperCase() };
}

/**
 * Signs RELEASE, writes Release, InRelease and Release.gpg into `dir`, and checks that gpgv
 * accepts both forms as signed by `signedBy`; answers the paths and what was signed.
 */
async function signedReleaseFiles(signer: OpenPgpSigner, keyring: string, dir: string, signedBy: RegExp) {
  const signed = await signer.signRelease(RELEASE);
  const paths = { release: join(dir, 'Release'), inRelease: join(dir, 'InRelease'), releaseGpg: join(dir, 'Release.gpg') };
  await writeFile(paths.release, RELEASE);
  await writeFile(paths.inRelease, signed.inRelease);
  await writeFile(paths.releaseGpg, signed.releaseGpg);
  for (const files of [[paths.inRelease], [paths.releaseGpg, paths.release]]) {
    const result = gpgv(keyring, ...files);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stderr, signedBy);
  }
  return { signed, paths };
}

describe('RSA signatures made by node:crypto (native-signing.ts)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let signer: OpenPgpSigner;
  let publicKey: string;
  let signingFingerprint: string;
  let keyring: string;
  before(async () => {
    ({ dir, cleanup } = await makeTempDir());
    const key = await rsaKeyWithSigningSubkey();
    ({ publicKey, signingFingerprint } = key);
    signer = await OpenPgpSigner.fromArmored(key.privateKey, 'pw');
    keyring = join(dir, 'keyring.gpg');
    await writeFile(keyring, signer.publicKeyBinary);
  });
  after(() => cleanup());

  it('signs a Release once: gpgv accepts InRelease and Release.gpg, the packet is gpg-shaped, by the signing subkey, with SHA-512', async () => {
    const { signed, paths } = await signedReleaseFiles(signer, keyring, dir, /Good signature from "Native RSA <rsa@example.com>"/);
    assert.ok(signed.inRelease.endsWith(signed.releaseGpg));
    const packets = listPackets(paths.releaseGpg);
    assert.match(packets, /signature packet: algo 1, keyid /);
    assert.match(packets, /sigclass 0x01/);
    assert.match(packets, /digest algo 10/);
    assert.match(packets, new RegExp(`hashed subpkt 33 len 21 \\(issuer fpr v4 ${signingFingerprint}\\)`));
    assert.match(packets, /critical hashed subpkt 2 len 4 \(sig created/);
    // What tells this path from OpenPGP.js's: the key id is not hashed, and there is no salt notation.
    assert.match(packets, /\n\tsubpkt 16 len 8 \(issuer key ID /);
    assert.doesNotMatch(packets, /notation/);
    await writeFile(paths.release, RELEASE.replace('jammy', 'noble'));
    assert.notEqual(gpgv(keyring, paths.releaseGpg, paths.release).status, 0);
    await writeFile(paths.inRelease, signed.inRelease.replace('jammy', 'noble'));
    assert.notEqual(gpgv(keyring, paths.inRelease).status, 0);
  });

  it('writes InRelease exactly as OpenPGP.js does but for the signature, and OpenPGP.js verifies it and reads back the whole Release', async () => {
    const text = `${RELEASE}-dash: a line starting with a dash\n`;
    const signed = await signer.signRelease(text);
    const key = await openpgp.decryptKey({ privateKey: await openpgp.readPrivateKey({ armoredKey: (await rsaKeyWithSigningSubkey()).privateKey }), passphrase: 'pw' });
    const reference = (await openpgp.sign({ message: await openpgp.createCleartextMessage({ text }), signingKeys: key, config: OPENPGP_CONFIG })).replace(/\r\n/g, '\n');
    const beforeArmor = (s: string) => s.slice(0, s.indexOf('-----BEGIN PGP SIGNATURE-----'));
    assert.equal(beforeArmor(signed.inRelease), beforeArmor(reference));
    assert.ok(signed.inRelease.includes('\n- -dash: a line'));
    const message = await openpgp.readCleartextMessage({ cleartextMessage: signed.inRelease });
    assert.equal(message.getText(), text);
    const verified = await openpgp.verify({ message, verificationKeys: await openpgp.readKey({ armoredKey: publicKey }), expectSigned: true, config: OPENPGP_CONFIG });
    assert.equal(verified.data, text);
  });

  it('makes binary detached signatures (repomd.xml.asc, RPM headers) that gpgv and OpenPGP.js accept', async () => {
    const data = Buffer.from([0, 1, 2, 0xff, 0x0d, 0x0a, 0x0a]);
    const dataPath = join(dir, 'data.bin');
    await writeFile(dataPath, data);
    const armored = await signer.detachedSign(data);
    await writeFile(join(dir, 'data.asc'), armored);
    const binary = await signer.detachedSignBinary(new Uint8Array(data));
    await writeFile(join(dir, 'data.sig'), binary);
    // The armor is OpenPGP.js's, checksum included (GnuPG needs it when the base64 ends unpadded).
    assert.equal(armoredSignature(binary), (await openpgp.readSignature({ binarySignature: binary })).armor());
    for (const sig of ['data.asc', 'data.sig']) {
      const result = gpgv(keyring, join(dir, sig), dataPath);
      assert.equal(result.status, 0, result.stderr);
      assert.match(listPackets(join(dir, sig)), /sigclass 0x00[\s\S]*digest algo 10/);
    }
    const verified = await openpgp.verify({
      message: await openpgp.createMessage({ binary: data }),
      signature: await openpgp.readSignature({ binarySignature: binary }),
      verificationKeys: await openpgp.readKey({ armoredKey: publicKey }),
      expectSigned: true,
    });
    assert.equal(verified.signatures.length, 1);
    await writeFile(dataPath, Buffer.concat([data, Buffer.from([1])]));
    assert.notEqual(gpgv(keyring, join(dir, 'data.sig'), dataPath).status, 0);
  });

  it('once its signing subkey has expired, signs as OpenPGP.js does: with the primary key', async (t) => {
    const { privateKey, publicKey: pub } = await openpgp.generateKey({
      type: 'rsa', rsaBits: 3072, userIDs: [{ name: 'Short subkey', email: 'rsa@example.com' }], passphrase: 'pw',
      subkeys: [{ sign: true, keyExpirationTime: 3600 }], format: 'armored', config: { v6Keys: false },
    });
    const primary = (await openpgp.readKey({ armoredKey: pub })).getFingerprint().toUpperCase();
    const short = await OpenPgpSigner.fromArmored(privateKey, 'pw');
    const signed = join(dir, 'short.asc');
    await writeFile(signed, await short.detachedSign('data'));
    assert.doesNotMatch(listPackets(signed), new RegExp(`issuer fpr v4 ${primary}`), 'the subkey signs while valid');
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() + 2 * 3600_000 });
    await writeFile(signed, await short.detachedSign('data'));
    t.mock.timers.reset();
    assert.match(listPackets(signed), new RegExp(`issuer fpr v4 ${primary}`));
  });

  it('refuses to sign with an expired key, as OpenPGP.js did', async () => {
    const expired = await rsaKeyWithSigningSubkey({ date: new Date(Date.now() - 2 * 86_400_000), keyExpirationTime: 86_400 });
    const old = await OpenPgpSigner.fromArmored(expired.privateKey, 'pw');
    assert.ok(old.expires && old.expires.getTime() < Date.now());
    await assert.rejects(() => old.signRelease(RELEASE));
    await assert.rejects(() => old.detachedSign('data'));
  });
});

describe('Ed25519 signatures made by node:crypto (native-signing.ts)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ dir, cleanup } = await makeTempDir());
  });
  after(() => cleanup());

  /** A v4 Ed25519 key as the service generates it (keygen.ts), with its primary key or a subkey signing. */
  const ed25519Key = (withSigningSubkey: boolean) => openpgp.generateKey({
    type: 'ecc', curve: 'ed25519Legacy' as never, userIDs: [{ name: 'Native EdDSA', email: 'ed@example.com' }], passphrase: 'pw',
    subkeys: withSigningSubkey ? [{ sign: true }] : [{}], format: 'armored', config: { v6Keys: false },
  });

  for (const withSigningSubkey of [false, true]) {
    it(`signs Release and detached data with ${withSigningSubkey ? 'a signing subkey' : 'the primary key'}: gpgv and OpenPGP.js accept them, gpg-shaped EdDSA packets`, async () => {
      const { privateKey, publicKey } = await ed25519Key(withSigningSubkey);
      const signer = await OpenPgpSigner.fromArmored(privateKey, 'pw');
      const signingFingerprint = (await (await openpgp.readKey({ armoredKey: publicKey })).getSigningKey()).getFingerprint().toUpperCase();
      const keyring = join(dir, `keyring-${withSigningSubkey}.gpg`);
      await writeFile(keyring, signer.publicKeyBinary);
      const { signed, paths } = await signedReleaseFiles(signer, keyring, dir, /Good signature from "Native EdDSA <ed@example.com>"/);
      const packets = listPackets(paths.releaseGpg);
      assert.match(packets, /signature packet: algo 22, keyid /);
      assert.match(packets, /digest algo 10/);
      assert.match(packets, new RegExp(`hashed subpkt 33 len 21 \\(issuer fpr v4 ${signingFingerprint}\\)`));
      // This path's mark (OpenPGP.js hashes the key id and adds a salt notation).
      assert.match(packets, /\n\tsubpkt 16 len 8 \(issuer key ID /);
      assert.doesNotMatch(packets, /notation/);
      const message = await openpgp.readCleartextMessage({ cleartextMessage: signed.inRelease });
      const verified = await openpgp.verify({ message, verificationKeys: await openpgp.readKey({ armoredKey: publicKey }), expectSigned: true, config: OPENPGP_CONFIG });
      assert.equal(verified.data, RELEASE);
      await writeFile(paths.inRelease, signed.inRelease.replace('jammy', 'noble'));
      assert.notEqual(gpgv(keyring, paths.inRelease).status, 0);

      // Detached binary signatures (repomd.xml.asc, RPM headers).
      const data = Buffer.from('repomd');
      const dataPath = join(dir, 'data.bin');
      await writeFile(dataPath, data);
      for (let i = 0; i < 3; i++) {
        const binary = await signer.detachedSignBinary(new Uint8Array(data));
        await writeFile(join(dir, 'data.sig'), binary);
        assert.equal(gpgv(keyring, join(dir, 'data.sig'), dataPath).status, 0);
      }
      // One signature in 128 has an r or s starting with a zero byte. EdDSA is deterministic, so
      // sign 3,000 different texts (missing one: ~1e-10), take the shortest signature and check
      // that gpgv and OpenPGP.js read its shorter MPI.
      const texts = Array.from({ length: 3000 }, (_, i) => Buffer.from(`repomd ${i}`));
      const many = await Promise.all(texts.map(async (text) => ({ text, sig: (await signer.detachedSignBinary(new Uint8Array(text))) as Uint8Array })));
      const shortest = many.reduce((a, b) => (b.sig.length < a.sig.length ? b : a));
      assert.ok(shortest.sig.length < Math.max(...many.map((m) => m.sig.length)), 'a signature with a leading zero byte');
      await writeFile(join(dir, 'short.sig'), shortest.sig);
      await writeFile(dataPath, shortest.text);
      assert.equal(gpgv(keyring, join(dir, 'short.sig'), dataPath).status, 0);
      await openpgp.verify({
        message: await openpgp.createMessage({ binary: shortest.text }), signature: await openpgp.readSignature({ binarySignature: shortest.sig }),
        verificationKeys: await openpgp.readKey({ armoredKey: publicKey }), expectSigned: true,
      });
    });
  }
});
