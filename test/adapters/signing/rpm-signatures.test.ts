/**
 * RPM package signatures written by our code, checked by the real `rpm -K`: RSA and Ed25519
 * keys, header-only and header+payload signatures, NOKEY without the key, BAD after a flipped
 * payload byte, an earlier signature replaced by re-signing, and the package otherwise unchanged.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFile, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildRpm } from '../../../harness/rpms.js';
import { generateKeyInWorker } from '../../../src/adapters/signing/keygen.js';
import { OpenPgpSigner } from '../../../src/adapters/signing/openpgp-signer.js';
import { readSections, signRpmToTemp, verifyRpmSignature } from '../../../src/adapters/signing/rpm-signatures.js';
import type { Signer } from '../../../src/adapters/signing/signer.js';
import { DomainError } from '../../../src/domain/errors.js';
import { SignatureTag } from '../../../src/domain/rpm/signature-header.js';
import { makeTempDir } from '../../helpers/tmp.js';

function rpm(args: string[]): { status: number | null; out: string } {
  const r = spawnSync('rpm', args, { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}


/** Writes `target` as `source` signed by `signer`, checking the digests computed while writing. */
async function signRpmFile(source: string, target: string, signer: Signer): Promise<void> {
  const signed = await signRpmToTemp(source, signer, join(target, '..'));
  const { createHash } = await import('node:crypto');
  assert.equal(createHash('sha256').update(await readFile(signed.file.path)).digest('hex'), signed.file.sha256);
  assert.equal((await stat(signed.file.path)).size, signed.file.size);
  await rename(signed.file.path, target);
}

describe('RPM file signing (checked with rpm -K)', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let unsigned: string;
  const signers: Record<'rsa' | 'ed25519', OpenPgpSigner> = {} as never;
  const dbFor: Record<string, string> = {};

  before(async () => {
    tmp = await makeTempDir('tollgate-rpmsign-');
    unsigned = await buildRpm(tmp.dir, { name: 'signme', version: '2.1', release: '3.el9', epoch: 1, files: { '/usr/share/signme/data.txt': 'payload bytes\n'.repeat(500) } });
    for (const type of ['rsa', 'ed25519'] as const) {
      const key = await generateKeyInWorker({ name: `Test ${type}`, email: `${type}@example.org`, type, rsaBits: 3072, passphrase: 'pw' });
      signers[type] = await OpenPgpSigner.fromArmored(key.privateKeyArmored, 'pw');
      const db = join(tmp.dir, `rpmdb-${type}`);
      const keyFile = join(tmp.dir, `${type}.asc`);
      await writeFile(keyFile, key.publicKeyArmored);
      const imported = rpm(['--dbpath', db, '--import', keyFile]);
      assert.equal(imported.status, 0, imported.out);
      dbFor[type] = db;
    }
  });
  after(async () => tmp?.cleanup());

  for (const type of ['rsa', 'ed25519'] as const) {
    it(`${type}: rpm -K verifies both signatures with the key imported, and says NOKEY without it`, async () => {
      const signed = join(tmp.dir, `signed-${type}.rpm`);
      await signRpmFile(unsigned, signed, signers[type]);
      const checked = rpm(['-Kv', '--dbpath', dbFor[type]!, signed]);
      assert.equal(checked.status, 0, checked.out);
      const algo = type === 'rsa' ? 'RSA' : 'EdDSA';
      assert.match(checked.out, new RegExp(`Header V4 ${algo}/SHA512 Signature, key ID ${signers[type].keyId.slice(-8).toLowerCase()}: OK`), checked.out);
      assert.match(checked.out, new RegExp(`\\n\\s+V4 ${algo}/SHA512 Signature, key ID [0-9a-f]+: OK`), `header+payload signature: ${checked.out}`);
      assert.doesNotMatch(checked.out, /NOKEY|BAD|NOT OK/);

      const other = type === 'rsa' ? 'ed25519' : 'rsa';
      const nokey = rpm(['-K', '--dbpath', dbFor[other]!, signed]);
      assert.notEqual(nokey.status, 0);
      assert.match(nokey.out, /NOKEY|SIGNATURES NOT OK/);

      // Same size (the signatures fit in the reserved space), same metadata.
      assert.equal((await stat(signed)).size, (await stat(unsigned)).size);
      const q = rpm(['-qp', '--nosignature', '--queryformat', '%{EPOCH}:%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}', signed]);
      assert.equal(q.out.trim(), '1:signme-2.1-3.el9.x86_64');
      const { sections } = await readSections(signed);
      const tags = sections.signature.map((e) => e.tag);
      assert.ok(tags.includes(type === 'rsa' ? SignatureTag.RSA : SignatureTag.DSA));
      assert.ok(tags.includes(type === 'rsa' ? SignatureTag.PGP : SignatureTag.GPG));
    });
  }

  it('a flipped payload byte is refused; re-signing with another key replaces the earlier signatures', async () => {
    const signed = join(tmp.dir, 'flip.rpm');
    await signRpmFile(unsigned, signed, signers.rsa);
    const bytes = await readFile(signed);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 10) ^ 0xff, bytes.length - 10);
    const flipped = join(tmp.dir, 'flipped.rpm');
    await writeFile(flipped, bytes);
    const bad = rpm(['-K', '--dbpath', dbFor.rsa!, flipped]);
    assert.notEqual(bad.status, 0, bad.out);
    assert.match(bad.out, /NOT OK|BAD/);

    // Signed by the RSA key first, then by the Ed25519 key: only the Ed25519 signature is left.
    const resigned = join(tmp.dir, 'resigned.rpm');
    await signRpmFile(signed, resigned, signers.ed25519);
    assert.equal(rpm(['-K', '--dbpath', dbFor.ed25519!, resigned]).status, 0);
    const old = rpm(['-K', '--dbpath', dbFor.rsa!, resigned]);
    assert.notEqual(old.status, 0, 'the old key no longer verifies');
    const { sections } = await readSections(resigned);
    assert.deepEqual(sections.signature.filter((e) => [SignatureTag.RSA, SignatureTag.PGP, SignatureTag.DSA, SignatureTag.GPG].includes(e.tag as never)).map((e) => e.tag).sort((a, b) => a - b), [SignatureTag.DSA, SignatureTag.GPG]);
  });

  it('verifies a package signed by rpmsign with a trusted key; refuses an unsigned one, an untrusted key and a tampered header', async () => {
    const home = join(tmp.dir, 'gnupg');
    await mkdir(home, { mode: 0o700 });
    const gpg = (args: string[]) => execFileSync('gpg', ['--homedir', home, '--batch', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], { encoding: 'utf8' });
    gpg(['--quick-gen-key', 'Build System <build@example.org>', 'rsa3072', 'sign', 'never']);
    const buildKey = gpg(['--armor', '--export', 'build@example.org']);
    const byBuild = join(tmp.dir, 'by-build.rpm');
    await copyFile(unsigned, byBuild);
    const signed = spawnSync('rpmsign', ['--addsign', '-D', '_gpg_name build@example.org', '-D', `_gpg_path ${home}`, '-D', '__gpg /usr/bin/gpg', byBuild], { encoding: 'utf8', env: { ...process.env, GNUPGHOME: home } });
    assert.equal(signed.status, 0, `${signed.stdout}${signed.stderr}`);

    await verifyRpmSignature(byBuild, buildKey);
    const code = async (path: string, keys: string) => verifyRpmSignature(path, keys).then(() => 'ok', (e: unknown) => (e instanceof DomainError ? e.code : String(e)));
    assert.equal(await code(unsigned, buildKey), 'rpm_signature_missing');
    assert.equal(await code(byBuild, signers.rsa.publicKeyArmored), 'signature_invalid');
    // Our own signature verifies with our key, the way a second Tollgate would trust the first.
    const ours = join(tmp.dir, 'ours.rpm');
    await signRpmFile(byBuild, ours, signers.rsa);
    assert.equal(await code(ours, signers.rsa.publicKeyArmored), 'ok');
    assert.equal(await code(ours, buildKey), 'signature_invalid', 're-signing replaced the build signature');

    const bytes = await readFile(byBuild);
    const { sections } = await readSections(byBuild);
    const at = sections.headerStart + 200; // inside the main header
    bytes.writeUInt8(bytes.readUInt8(at) ^ 0x01, at);
    const tampered = join(tmp.dir, 'tampered.rpm');
    await writeFile(tampered, bytes);
    assert.equal(await code(tampered, buildKey), 'signature_invalid');
  });
});
