/**
 * SIGKILL while the service writes indexes: during a full rewrite of an APT index (a deletion)
 * and during a signing-key rotation (every index re-signed). The kill is sent the moment the
 * first temp file of the write appears (inotify through fs.watch), and counted only when it
 * landed before the write finished (InRelease, replaced last, still the old one). After a
 * restart, every APT index verifies with gpgv (and `apt-get update` where it lists packages),
 * every RPM repomd.xml with gpgv, against the key the repository serves.
 */
import assert from 'node:assert/strict';
import { watch, type FSWatcher } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildDeb } from '../../harness/debs.js';
import { exec } from '../helpers/apt.js';
import { makeTempDir } from '../helpers/tmp.js';
import { adminToken, call, leftoverTempFiles, startService, uploadFile, verifyAptRepository, waitUpToDate, type RunningService } from './support.js';

const APT = ['jammy', 'noble', 'focal', 'bookworm'];
const RPM = ['almalinux8', 'almalinux9', 'rocky8', 'rocky9', 'centos-stream9', 'fedora', 'opensuse-leap-15.6'];

/** SIGKILLs the service as soon as a temp file appears in one of `dirs`. */
function killOnFirstTempFile(service: RunningService, dirs: string[]): { stop(): void; fired(): boolean } {
  let fired = false;
  const watchers: FSWatcher[] = dirs.map((dir) => watch(dir, (_event, name) => {
    if (fired || !name || !String(name).endsWith('.tmp')) return;
    fired = true;
    service.child.kill('SIGKILL');
  }));
  return { stop: () => watchers.forEach((w) => w.close()), fired: () => fired };
}

describe('SIGKILL during index writes', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  let service: RunningService | null = null;
  before(async () => {
    work = await makeTempDir('tollgate-sigkill-');
  });
  after(async () => {
    await service?.kill();
    await work?.cleanup();
  });

  /** Everything a client checks, against the key the repository serves now. */
  const verifyEverything = async (base: string, token: string, expected: Map<string, Set<string>>) => {
    await waitUpToDate(base, token);
    const keyring = join(work.dir, 'served-key.gpg');
    await writeFile(keyring, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
    for (const codename of APT) {
      const names = expected.get(codename)!;
      if (names.size > 0) {
        // apt-get update checks every index file against the signed Release.
        assert.deepEqual(await verifyAptRepository(base, work.dir, codename, names), names, `${codename} lists what was published`);
        continue;
      }
      const inRelease = join(work.dir, `${codename}-InRelease`);
      await writeFile(inRelease, Buffer.from(await (await fetch(`${base}/repo/apt/dists/${codename}/InRelease`)).arrayBuffer()));
      const verified = await exec('gpgv', ['--keyring', keyring, inRelease]);
      assert.equal(verified.code, 0, `${codename}/InRelease: ${verified.stderr}`);
    }
    for (const codename of RPM) {
      const repomd = join(work.dir, `${codename}-repomd.xml`);
      const signature = `${repomd}.asc`;
      await writeFile(repomd, Buffer.from(await (await fetch(`${base}/repo/rpm/${codename}/x86_64/repodata/repomd.xml`)).arrayBuffer()));
      await writeFile(signature, Buffer.from(await (await fetch(`${base}/repo/rpm/${codename}/x86_64/repodata/repomd.xml.asc`)).arrayBuffer()));
      const verified = await exec('gpgv', ['--keyring', keyring, signature, repomd]);
      assert.equal(verified.code, 0, `${codename}/repomd.xml: ${verified.stderr}`);
    }
  };

  it('leaves every index verifiable after a kill mid-rewrite and a kill mid-rotation', async () => {
    const dataDir = join(work.dir, 'data');
    const port = (service = await startService(dataDir)).port;
    let token = await adminToken(service.base, dataDir);
    const expected = new Map<string, Set<string>>(APT.map((c) => [c, new Set<string>()]));
    for (let i = 0; i < 12; i++) {
      const codename = i % 4 === 0 ? 'bookworm' : 'jammy';
      const res = await uploadFile(service.base, token, await buildDeb(work.dir, { name: `kill-${i}`, version: '1.0', compression: 'gzip' }), codename);
      assert.equal(res.status, 201, res.text);
      expected.get(codename)!.add(`kill-${i}`);
    }
    await waitUpToDate(service.base, token);
    const jammyDir = join(dataDir, 'repo', 'apt', 'dists', 'jammy');
    const figures: string[] = [];

    // A deletion rewrites jammy's index in full; killed at its first temp file.
    let landed = 0;
    for (let attempt = 0; attempt < 3 && landed === 0; attempt++) {
      const before = await readFile(join(jammyDir, 'InRelease'));
      const victim = [...expected.get('jammy')!][0]!;
      const killer = killOnFirstTempFile(service, [join(jammyDir, 'main', 'binary-amd64', 'by-hash', 'SHA256'), join(jammyDir, 'main', 'binary-amd64'), jammyDir]);
      const answer = await fetch(`${service.base}/artifacts/${victim}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } }).then((r) => r.status, () => 'killed');
      await service.kill();
      killer.stop();
      assert.ok(killer.fired(), `no index write was seen (DELETE answered ${answer})`);
      // The deletion may or may not have been committed when the process died; after the
      // restart the index must agree with whichever it was.
      if ((await readFile(join(jammyDir, 'InRelease'))).equals(before)) landed++;
      service = await startService(dataDir, {}, port);
      token = await adminToken(service.base, dataDir);
      await waitUpToDate(service.base, token);
      const still = await call(service.base, token, 'GET', `/artifacts/${victim}`);
      if (still.status === 404) expected.get('jammy')!.delete(victim);
      // The restarted service may be writing a file of its own at this moment (its key export): a
      // temp file that stays is what counts, so the check waits a little for the writer's to go.
      let left: string[] = [];
      for (let tries = 0; tries < 50 && (left = await leftoverTempFiles(join(dataDir, 'repo'))).length > 0; tries++) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(left, [], 'start-up removes what the killed writer left');
      await verifyEverything(service.base, token, expected);
    }
    assert.equal(landed, 1, 'a kill landed before the rewrite finished');
    figures.push('full rewrite');

    // A key rotation re-signs every index; killed at the first temp file in any distribution.
    const releases = await Promise.all(APT.map((c) => readFile(join(dataDir, 'repo', 'apt', 'dists', c, 'InRelease'))));
    const killer = killOnFirstTempFile(service, [...APT.map((c) => join(dataDir, 'repo', 'apt', 'dists', c)), ...RPM.map((c) => join(dataDir, 'repo', 'rpm', c, 'x86_64', 'repodata'))]);
    await fetch(`${service.base}/settings/gpg/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rotated Key', email: 'rotated@example.org', algorithm: 'ed25519' }),
    }).catch(() => undefined);
    await service.kill();
    killer.stop();
    assert.ok(killer.fired(), 'no index write was seen during the rotation');
    const unchanged = (await Promise.all(APT.map((c) => readFile(join(dataDir, 'repo', 'apt', 'dists', c, 'InRelease'))))).filter((b, i) => b.equals(releases[i]!)).length;
    assert.ok(unchanged > 0, 'the kill landed before every index was re-signed');
    service = await startService(dataDir, {}, port);
    token = await adminToken(service.base, dataDir);
    await verifyEverything(service.base, token, expected);
    figures.push(`key rotation (${unchanged} of ${APT.length} APT indexes not yet re-signed)`);
    console.log(`sigkill: killed during ${figures.join(' and ')}; ${APT.length} APT indexes verified with gpgv (apt-get update where they list packages), ${RPM.length} RPM repomd.xml with gpgv`);
  });
});
