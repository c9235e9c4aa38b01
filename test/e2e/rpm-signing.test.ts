/**
 * Signed RPM packages, checked with the real tools: rpm -K on what the published tree serves, a
 * dnf with gpgcheck=1 installing into an empty root, a tampered file refused by both, key
 * rotation re-signing in the background without repodata and files ever disagreeing, and
 * uploads that must carry a trusted upstream signature (made with rpmsign and a throwaway key).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm } from '../../harness/rpms.js';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { dnfSandbox } from '../helpers/dnf.js';
import { makeTempDir } from '../helpers/tmp.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const GRACE_SECONDS = 8;

describe('Signed RPM packages: rpm -K, dnf with gpgcheck=1, key rotation, trusted upstream signatures', () => {
  let t: TestApp;
  let base: string;
  let admin: string;
  let work: { dir: string; cleanup: () => Promise<void> };
  let lib: string;
  let tool: string;
  let sandboxes = 0;

  const upload = async (path: string, distribution: string) => {
    const form = await multipartBody({ distribution }, { path });
    return t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
  };
  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`);
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const signingKey = async () => (await t.app.inject({ method: 'GET', url: '/settings/gpg', headers: bearer(admin) })).json();
  /** rpm -K against a throwaway rpmdb holding only `armoredKey`. */
  const checksig = async (file: string, armoredKey: string) => {
    const dir = join(work.dir, `rpmdb-${++sandboxes}`);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'key.asc'), armoredKey);
    const imported = spawnSync('rpm', ['--dbpath', dir, '--import', join(dir, 'key.asc')], { encoding: 'utf8' });
    assert.equal(imported.status, 0, imported.stderr);
    const checked = spawnSync('rpm', ['--dbpath', dir, '-K', file], { encoding: 'utf8' });
    return { ok: checked.status === 0, out: `${checked.stdout}${checked.stderr}` };
  };
  const sandbox = (codename: string) =>
    dnfSandbox(join(work.dir, `dnf-${++sandboxes}`), { id: `tollgate-${codename}`, baseurl: `${base}/repo/rpm/${codename}/x86_64/`, gpgkey: `${base}/repo/keys/tollgate.asc` });

  /** Every package repodata lists, with the checksum it gives, as a client reads it now. */
  const listed = async (codename: string) => {
    const root = `/repo/rpm/${codename}/x86_64/`;
    const repomd = (await get(`${root}repodata/repomd.xml`)).bytes.toString('utf8');
    const href = /<location href="(repodata\/[0-9a-f]{64}-primary\.xml\.gz)"/.exec(repomd)![1]!;
    const primary = gunzipSync((await get(`${root}${href}`)).bytes).toString('utf8');
    return [...primary.matchAll(/<checksum type="sha256" pkgid="YES">([0-9a-f]{64})<\/checksum>[\s\S]*?<location href="([^"]+)"/g)].map((m) => ({ sha256: m[1]!, url: `${root}${m[2]!}` }));
  };
  /** Downloads every listed package and checks its bytes against the listed checksum. */
  const repodataAgreesWithFiles = async (codename: string) => {
    const entries = await listed(codename);
    for (const entry of entries) {
      const file = await get(entry.url);
      assert.equal(file.status, 200, `${entry.url} is listed but not served`);
      assert.equal(sha256(file.bytes), entry.sha256, `${entry.url} differs from its repodata checksum`);
    }
    return entries;
  };
  const publishedFile = async (codename: string, name: string) => {
    const entry = (await listed(codename)).find((e) => e.url.includes(`/${name}-`))!;
    const path = join(work.dir, `${name}-${++sandboxes}.rpm`);
    await writeFile(path, (await get(entry.url)).bytes);
    return { path, url: entry.url };
  };

  before(async () => {
    work = await makeTempDir('tollgate-rpm-signing-');
    t = await startTestApp({ env: { RPM_RESIGN_GRACE_SECONDS: String(GRACE_SECONDS) } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    admin = await t.tokenFor('admin');
    lib = await buildRpm(work.dir, {
      name: 'signed-lib', version: '1.5.0+ds1', release: '1.el9', arch: 'noarch', payloadCompression: 'zstd',
      files: { '/usr/share/signed-lib/data.txt': 'lib\n' }, noAutoReqProv: true,
    });
    tool = await buildRpm(work.dir, {
      name: 'signed-tool', version: '2.0~rc1', release: '3.el9', epoch: 1, arch: 'x86_64', payloadCompression: 'gzip',
      requires: ['signed-lib >= 1.5'], files: { '/usr/share/signed-tool/readme': 'tool\n' }, noAutoReqProv: true,
    });
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  it('publishes signed copies that rpm -K verifies with the exported key, and dnf installs with gpgcheck=1', async () => {
    for (const path of [lib, tool]) {
      const res = await upload(path, 'rocky9');
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.equal(body.status, 'published');
      assert.equal(body.sha256, sha256(await readFile(path)), 'the answer names the uploaded bytes (provenance)');
      assert.equal(body.signature.signed_by, (await signingKey()).fingerprint);
      assert.notEqual(body.signature.sha256, body.sha256);
      assert.match(body.steps.find((s: { name: string }) => s.name === 'signature').message, /package signed with key [0-9A-F]{16}/);
    }
    await repodataAgreesWithFiles('rocky9');
    const key = (await get('/repo/keys/tollgate.asc')).bytes.toString('utf8');
    const served = await publishedFile('rocky9', 'signed-tool');
    const verified = await checksig(served.path, key);
    assert.ok(verified.ok, verified.out);
    assert.match(verified.out, /signatures OK/);
    // The upload as it came carries no signature: rpm -K says so.
    assert.doesNotMatch((await checksig(tool, key)).out, /signatures OK/);

    const dnf = await sandbox('rocky9');
    const installed = await dnf.install(['signed-tool']);
    assert.equal(installed.code, 0, installed.stderr + installed.stdout);
    assert.equal(await readFile(join(dnf.dir, 'root', 'usr/share/signed-tool/readme'), 'utf8'), 'tool\n');
    assert.equal(await readFile(join(dnf.dir, 'root', 'usr/share/signed-lib/data.txt'), 'utf8'), 'lib\n');
  });

  it('refuses a package with a byte flipped in its payload, in rpm -K and in dnf', async () => {
    const served = await publishedFile('rocky9', 'signed-lib');
    const bytes = await readFile(served.path);
    bytes[bytes.length - 20]! ^= 0xff;
    await mkdir(join(work.dir, 'flipped'), { recursive: true });
    const flipped = join(work.dir, 'flipped', 'signed-lib-1.5.0+ds1-1.el9.noarch.rpm');
    await writeFile(flipped, bytes);
    const key = (await get('/repo/keys/tollgate.asc')).bytes.toString('utf8');
    const checked = await checksig(flipped, key);
    assert.equal(checked.ok, false, checked.out);
    assert.match(checked.out, /NOT OK|BAD/);
    const dnf = await sandbox('rocky9');
    // dnf imports the repository key for packages from the repository; a local file needs it imported first.
    await writeFile(join(dnf.dir, 'key.asc'), key);
    const imported = await dnf.importKey(join(dnf.dir, 'key.asc'));
    assert.equal(imported.code, 0, imported.stderr);
    const refused = await dnf.install([flipped]);
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(`${refused.stdout}${refused.stderr}`, /BAD|NOT OK|damaged|corrupt|does not verify|failed/i);
    // The untouched file installs from the same sandbox: the refusal was the flipped byte.
    const good = join(work.dir, 'good', 'signed-lib-1.5.0+ds1-1.el9.noarch.rpm');
    await mkdir(join(work.dir, 'good'), { recursive: true });
    await copyFile(served.path, good);
    const accepted = await dnf.install([good]);
    assert.equal(accepted.code, 0, accepted.stderr + accepted.stdout);
  });

  it('re-signs everything after a key rotation, in the background, with repodata and files agreeing throughout', async () => {
    const oldKey = (await signingKey()).armored_public_key as string;
    const before = await publishedFile('rocky9', 'signed-tool');
    // Promoted before the rotation: its copy in another distribution is re-signed too.
    const promoted = await t.app.inject({ method: 'POST', url: '/distributions/promote', headers: bearer(admin), payload: { name: 'signed-lib', version: '1.5.0+ds1-1.el9', from_distribution: 'rocky9', to_distribution: 'almalinux9' } });
    assert.equal(promoted.statusCode, 200, promoted.body);

    const rotated = await t.app.inject({ method: 'POST', url: '/settings/gpg/generate', headers: bearer(admin), payload: { name: 'Rotated', email: 'rotated@example.org', algorithm: 'rsa3072' } });
    assert.equal(rotated.statusCode, 201, rotated.body);
    const newKey = rotated.json().armored_public_key as string;
    assert.equal(rotated.json().rpm_signing.packages, 3);

    let progress = rotated.json().rpm_signing;
    const deadline = Date.now() + 60_000;
    let checks = 0;
    while (progress.running || progress.signed_with_active_key < progress.packages) {
      assert.ok(Date.now() < deadline, `re-signing did not finish: ${JSON.stringify(progress)}`);
      await repodataAgreesWithFiles('rocky9');
      await repodataAgreesWithFiles('almalinux9');
      checks++;
      progress = (await signingKey()).rpm_signing;
    }
    // A client that read the previous repodata a moment ago still finds its files, for the grace period.
    assert.equal((await get(before.url)).status, 200);
    assert.deepEqual(progress.failures, []);
    assert.equal(progress.signed_with_active_key, 3);
    await repodataAgreesWithFiles('rocky9');
    assert.equal((await repodataAgreesWithFiles('almalinux9')).length, 1);
    assert.ok(checks >= 0);

    const after = await publishedFile('rocky9', 'signed-tool');
    assert.notEqual(after.url, before.url, 'the re-signed file has a path of its own');
    const withNew = await checksig(after.path, newKey);
    assert.ok(withNew.ok, withNew.out);
    const withOld = await checksig(after.path, oldKey);
    assert.equal(withOld.ok, false, `the old key must no longer verify: ${withOld.out}`);
    // The key file clients import holds only the new key once every file carries it.
    const exported = (await get('/repo/keys/tollgate.asc')).bytes.toString('utf8');
    assert.equal(exported.match(/BEGIN PGP PUBLIC KEY BLOCK/g)!.length, 1);
    const dnf = await sandbox('rocky9');
    const installed = await dnf.install(['signed-tool']);
    assert.equal(installed.code, 0, installed.stderr + installed.stdout);

    const gone = Date.now() + 30_000;
    while ((await get(before.url)).status === 200) {
      assert.ok(Date.now() < gone, 'the earlier file is removed after the grace period');
      await new Promise((r) => setTimeout(r, 250));
    }
    const audit = await t.app.inject({ method: 'GET', url: '/audit/logs?action=GPG_GENERATE', headers: bearer(admin) });
    assert.equal(audit.statusCode, 200);
    assert.match(audit.body, /GPG_GENERATE/);
  });

  it('requires a trusted upstream signature where configured; keeps or refuses signatures as rpm_signature_policy says', async () => {
    const home = join(work.dir, 'gnupg');
    await mkdir(home, { mode: 0o700 });
    const gpg = (args: string[]) => execFileSync('gpg', ['--homedir', home, '--batch', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], { encoding: 'utf8' });
    gpg(['--quick-gen-key', 'Build System <build@example.org>', 'ed25519', 'sign', 'never']);
    gpg(['--quick-gen-key', 'Someone Else <rogue@example.org>', 'ed25519', 'sign', 'never']);
    const buildKey = gpg(['--armor', '--export', 'build@example.org']);
    const signedBy = async (source: string, who: string, name: string) => {
      const dir = join(work.dir, `signed-by-${++sandboxes}`);
      await mkdir(dir, { recursive: true });
      const path = join(dir, name);
      await copyFile(source, path);
      const signed = spawnSync('rpmsign', ['--addsign', '-D', `_gpg_name ${who}`, '-D', `_gpg_path ${home}`, '-D', '__gpg /usr/bin/gpg', path], { encoding: 'utf8', env: { ...process.env, GNUPGHOME: home } });
      assert.equal(signed.status, 0, `${signed.stdout}${signed.stderr}`);
      return path;
    };
    const settings = (payload: object) => t.app.inject({ method: 'PATCH', url: '/settings/', headers: bearer(admin), payload });

    const garbage = await settings({ rpm_trusted_keys: { almalinux9: '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnot a key\n-----END PGP PUBLIC KEY BLOCK-----\n' } });
    assert.equal(garbage.statusCode, 422, garbage.body);
    assert.equal((await settings({ rpm_trusted_keys: { jammy: buildKey } })).statusCode, 422, 'only RPM distributions take trusted keys');
    const trusted = await settings({ rpm_trusted_keys: { almalinux9: buildKey } });
    assert.equal(trusted.statusCode, 200, trusted.body);

    const unsigned = await upload(tool, 'almalinux9');
    assert.equal(unsigned.statusCode, 422, unsigned.body);
    assert.equal(unsigned.json().code, 'rpm_signature_missing');
    const rogue = await upload(await signedBy(tool, 'rogue@example.org', 'signed-tool-2.0~rc1-3.el9.x86_64.rpm'), 'almalinux9');
    assert.equal(rogue.statusCode, 422, rogue.body);
    assert.equal(rogue.json().code, 'rpm_signature_invalid');

    const byBuild = await signedBy(tool, 'build@example.org', 'signed-tool-2.0~rc1-3.el9.x86_64.rpm');
    const accepted = await upload(byBuild, 'almalinux9');
    assert.equal(accepted.statusCode, 201, accepted.body);
    assert.match(accepted.json().steps.find((s: { name: string }) => s.name === 'provenance').message, /upstream signature verified with a trusted key/);
    const ours = (await signingKey()).armored_public_key as string;
    const replaced = await publishedFile('almalinux9', 'signed-tool');
    assert.ok((await checksig(replaced.path, ours)).ok, 'replace (the default): the repository signature');
    assert.equal((await checksig(replaced.path, buildKey)).ok, false, 'replace: the build signature is gone');

    // keep: a signed upload is published byte for byte with its own signature.
    assert.equal((await settings({ rpm_signature_policy: 'keep' })).statusCode, 200);
    const keptUpload = await signedBy(lib, 'build@example.org', 'signed-lib-1.5.0+ds1-1.el9.noarch.rpm');
    const delLib = await t.app.inject({ method: 'DELETE', url: '/artifacts/signed-lib?distribution=almalinux9', headers: bearer(admin) });
    assert.equal(delLib.statusCode, 200, delLib.body);
    const kept = await upload(keptUpload, 'almalinux9');
    assert.equal(kept.statusCode, 201, kept.body);
    assert.equal(kept.json().signature.signed_by, 'upstream');
    const keptServed = await publishedFile('almalinux9', 'signed-lib');
    assert.equal(sha256(await readFile(keptServed.path)), sha256(await readFile(keptUpload)));
    assert.ok((await checksig(keptServed.path, buildKey)).ok);

    // refuse_unsigned: no trusted keys in rocky8, yet an unsigned upload is refused.
    assert.equal((await settings({ rpm_signature_policy: 'refuse_unsigned' })).statusCode, 200);
    const refused = await upload(lib, 'rocky8');
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().code, 'rpm_signature_missing');
    const signedOk = await upload(keptUpload, 'rocky8');
    assert.equal(signedOk.statusCode, 201, signedOk.body);
    assert.equal(signedOk.json().signature.signed_by, (await signingKey()).fingerprint);
    await settings({ rpm_signature_policy: 'replace', rpm_trusted_keys: {} });
  });
});
