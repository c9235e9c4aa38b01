import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { aptSandbox, exec } from '../helpers/apt.js';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { makeTempDir } from '../helpers/tmp.js';
import { freePort } from '../../harness/net.js';
import { loginAsInitialAdmin, spawnService, waitFor, waitUntilReady } from '../../harness/service.js';

describe('crash safety: SIGKILL in the middle of a stream of uploads', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  let child: ChildProcess | null = null;
  after(async () => {
    child?.kill('SIGKILL');
    await work.cleanup();
  });
  before(async () => {
    work = await makeTempDir('tollgate-crash-');
  });

  it('keeps every upload answered 201 published in a signed index that verifies, and serves no half-written file', async () => {
    const dataDir = join(work.dir, 'data');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = { SIGNING_KEY_ALGORITHM: 'ed25519', BCRYPT_ROUNDS: '4', ENV: 'development' };
    child = spawnService(dataDir, port, env);
    await waitUntilReady(base, 'first start');
    const token = await loginAsInitialAdmin(base, dataDir);

    const debs = await Promise.all(Array.from({ length: 60 }, (_, i) => buildDeb(work.dir, { name: `crash-${i}`, version: '1.0', arch: 'amd64', files: { [`usr/share/crash/${i}`]: `payload ${i}\n`.repeat(200) } })));
    const published = new Set<string>();
    let next = 0;
    let killed = false;
    // Four clients upload one package after another until the server dies under them.
    const client = async () => {
      while (next < debs.length && !killed) {
        const i = next++;
        const form = await multipartBody({ distribution: 'jammy' }, { path: debs[i]! });
        try {
          const res = await fetch(`${base}/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...form.headers }, body: form.payload });
          const body = (await res.json()) as { status?: string };
          if (res.status === 201 && body.status === 'published') published.add(`crash-${i}`);
          if (published.size >= 12 && !killed) {
            killed = true;
            child!.kill('SIGKILL');
          }
        } catch {
          // the connection died with the server: this upload was never answered
        }
      }
    };
    await Promise.all([client(), client(), client(), client()]);
    assert.ok(killed, 'the server was killed mid-stream');
    assert.ok(published.size >= 12);
    const dead = child;
    if (dead.exitCode === null && dead.signalCode === null) await new Promise((r) => dead.once('exit', r));

    child = spawnService(dataDir, port, env);
    await waitUntilReady(base, 'restart');
    // Start-up republishes what the crash left unpublished; wait until jammy is up to date.
    await waitFor(async () => {
      const res = await fetch(`${base}/distributions`, { headers: { authorization: `Bearer ${token}` } });
      const list = (await res.json()) as Array<{ codename: string; up_to_date: boolean }>;
      return list.find((d) => d.codename === 'jammy')?.up_to_date === true;
    }, 'jammy republished');

    const keyring = join(work.dir, 'key.gpg');
    await writeFile(keyring, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
    const inRelease = join(work.dir, 'InRelease');
    await writeFile(inRelease, Buffer.from(await (await fetch(`${base}/repo/apt/dists/jammy/InRelease`)).arrayBuffer()));
    assert.equal((await exec('gpgv', ['--keyring', keyring, inRelease])).code, 0, 'InRelease verifies');

    // apt checks every index file it downloads against the signed Release.
    const apt = await aptSandbox(join(work.dir, 'apt'));
    await apt.setSource(`deb [signed-by=${keyring}] ${base}/repo/apt jammy main`);
    const update = await apt.update();
    assert.equal(update.code, 0, update.stderr);
    assert.doesNotMatch(update.stderr, /Hash Sum mismatch|W: |E: /);
    for (const name of published) assert.match((await apt.policy(name)).stdout, /Candidate: 1\.0/, `${name} was answered 201 but is not in the index`);

    // Every package file the index names is served whole.
    const packages = await (await fetch(`${base}/repo/apt/dists/jammy/main/binary-amd64/Packages`)).text();
    const entries = [...packages.matchAll(/^Filename: (.+)\nSize: \d+\n(?:.*\n)*?SHA256: ([0-9a-f]{64})$/gm)];
    assert.ok(entries.length >= published.size);
    for (const [, filename, sha] of entries) {
      const bytes = Buffer.from(await (await fetch(`${base}/repo/apt/${filename}`)).arrayBuffer());
      assert.equal(createHash('sha256').update(bytes).digest('hex'), sha, filename);
    }
    // No temp file a killed writer left is served, and start-up removed them.
    const tmp = await exec('sh', ['-c', `find ${join(dataDir, 'repo')} -name '*.tmp' | head -5`]);
    assert.equal(tmp.stdout.trim(), '', 'temp files in the served tree');
    // The audit chain survived the kill, and every upload answered 201 was audited before its answer.
    const verify = (await (await fetch(`${base}/audit/verify`, { headers: { authorization: `Bearer ${token}` } })).json()) as { ok: boolean; first_broken: unknown };
    assert.equal(verify.ok, true, JSON.stringify(verify.first_broken));
    const auditFiles = (await readdir(join(dataDir, 'audit'))).filter((f) => f.endsWith('.jsonl'));
    const auditEntries = (await Promise.all(auditFiles.map((f) => readFile(join(dataDir, 'audit', f), 'utf8'))))
      .flatMap((text) => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { action: string; result: string; package: string | null }));
    const uploaded = new Set(auditEntries.filter((e) => e.action === 'UPLOAD' && e.result === 'SUCCESS').map((e) => e.package));
    for (const name of published) assert.ok(uploaded.has(name), `${name} was answered 201 without an UPLOAD audit entry`);
  });
});
