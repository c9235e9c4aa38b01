/**
 * OpenPGP.js as patched by patches/openpgp+6.3.2.patch: its iterated and salted S2K hashes the
 * repeated salt and passphrase in 64 KiB blocks instead of one buffer of `count` bytes (16 MiB at
 * the default count, held until V8's next full collection: the service unlocks its signing key at
 * start-up). The digests are checked against GnuPG's in both directions, and the memory against
 * the unpatched library's cost.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as openpgp from 'openpgp';

const PASSPHRASE = 'correct horse battery staple';
const PLAINTEXT = 'the same bytes after both implementations derived the same key\n';

describe('OpenPGP.js iterated S2K in blocks (patched), against GnuPG', () => {
  let home: string;
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'tollgate-s2k-'));
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  const gpg = (args: string[], input?: string) => {
    const r = spawnSync('gpg', ['--homedir', home, '--batch', '--yes', '--pinentry-mode', 'loopback', '--passphrase', PASSPHRASE, ...args], { input, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };

  // SHA-1 with AES-256 needs 32 key bytes from a 20-byte hash: two rounds, the second one hashing a
  // zero octet first (the preload). The counts: gpg's smallest, one not a multiple of the salt and
  // passphrase (56 bytes), and the default (65011712 octets, 16 MiB + change).
  const cases = [
    { digest: 'SHA1', cipher: 'AES256', count: 1024 },
    { digest: 'SHA1', cipher: 'AES128', count: 65011712 },
    { digest: 'SHA256', cipher: 'AES256', count: 3_000_000 },
    { digest: 'SHA512', cipher: 'AES256', count: 65536 },
    { digest: 'SHA224', cipher: 'AES192', count: 1_048_576 },
  ];
  for (const c of cases) {
    it(`reads what gpg --symmetric wrote with ${c.digest}, ${c.cipher}, count ${c.count}`, async () => {
      const armored = gpg(['--symmetric', '--armor', '--s2k-mode', '3', '--s2k-digest-algo', c.digest, '--s2k-count', String(c.count), '--cipher-algo', c.cipher], PLAINTEXT);
      assert.match(gpg(['--list-packets'], armored), /s2k 3, hash \d+[\s\S]*count \d+/, 'iterated and salted S2K');
      const message = await openpgp.readMessage({ armoredMessage: armored });
      const { data } = await openpgp.decrypt({ message, passwords: [PASSPHRASE] });
      assert.equal(data, PLAINTEXT);
    });
  }

  it('writes what gpg --decrypt reads (SHA-256, AES-256, the default count)', async () => {
    const encrypted = await openpgp.encrypt({ message: await openpgp.createMessage({ text: PLAINTEXT }), passwords: [PASSPHRASE], format: 'armored' });
    const file = join(home, 'message.asc');
    writeFileSync(file, encrypted);
    assert.match(gpg(['--list-packets', file]), /s2k 3, hash 8[\s\S]*count 16777216 \(224\)/, 'iterated and salted, SHA-256, the default count');
    assert.equal(gpg(['--decrypt', file]).replace(/\r\n/g, '\n'), PLAINTEXT);
  });

  it('protects a private key that gpg imports and signs with, given the passphrase; and unlocks what gpg exported', async () => {
    const { privateKey } = await openpgp.generateKey({ type: 'ecc', curve: 'ed25519Legacy', userIDs: [{ name: 'S2K', email: 's2k@example.org' }], passphrase: PASSPHRASE, format: 'armored', config: { v6Keys: false } });
    const keyFile = join(home, 'ours.asc');
    writeFileSync(keyFile, privateKey);
    gpg(['--import', keyFile]);
    const data = join(home, 'data.txt');
    writeFileSync(data, PLAINTEXT);
    gpg(['--local-user', 's2k@example.org', '--detach-sign', '--output', `${data}.sig`, data]);
    gpg(['--verify', `${data}.sig`, data]);

    gpg(['--quick-gen-key', 'Theirs <theirs@example.org>', 'ed25519', 'sign', 'never']);
    const exported = gpg(['--export-secret-keys', '--armor', 'theirs@example.org']);
    const locked = await openpgp.readPrivateKey({ armoredKey: exported });
    assert.equal(locked.isDecrypted(), false);
    const unlocked = await openpgp.decryptKey({ privateKey: locked, passphrase: PASSPHRASE });
    assert.equal(unlocked.isDecrypted(), true);
    await assert.rejects(openpgp.decryptKey({ privateKey: locked, passphrase: 'wrong' }), /Incorrect key passphrase/);
  });

  it('unlocks a key protected with the default count without a 16 MiB buffer', async () => {
    const { privateKey } = await openpgp.generateKey({ type: 'ecc', curve: 'ed25519Legacy', userIDs: [{ name: 'S2K', email: 's2k@example.org' }], passphrase: PASSPHRASE, format: 'armored', config: { v6Keys: false } });
    // In a process of its own: here, earlier tests' buffers make V8 collect during the unlock,
    // which would hide a 16 MiB allocation. Array buffers are counted when allocated and forgotten
    // only by a collection, which a fresh process does not run for 16 MiB.
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', `
      import * as openpgp from 'openpgp';
      const armoredKey = (await new Response(process.stdin).text());
      const locked = await openpgp.readPrivateKey({ armoredKey });
      const before = process.memoryUsage().arrayBuffers;
      const key = await openpgp.decryptKey({ privateKey: locked, passphrase: ${JSON.stringify(PASSPHRASE)} });
      console.log(JSON.stringify({ decrypted: key.isDecrypted(), grown: process.memoryUsage().arrayBuffers - before }));
    `], { cwd: new URL('../../..', import.meta.url).pathname, input: privateKey, encoding: 'utf8', timeout: 60_000 });
    assert.equal(child.status, 0, child.stderr);
    const { decrypted, grown } = JSON.parse(child.stdout) as { decrypted: boolean; grown: number };
    assert.equal(decrypted, true);
    assert.ok(grown < 2 * 1024 * 1024, `array buffers grew by ${(grown / 1048576).toFixed(1)} MiB`);
  });
});

describe('the patch is in the OpenPGP.js copy Node loads', () => {
  it('names its block hashing in dist/node/openpgp.mjs (a new OpenPGP.js version needs the patch redone)', () => {
    const source = readFileSync(new URL(import.meta.resolve('openpgp')), 'utf8');
    assert.match(source, /function iteratedS2KDigestInBlocks\(/);
  });
});
