/**
 * clamd killed in the middle of a scan: the service has sent part of the package (clamd is
 * stopped, so the socket fills up) when clamd dies. The upload must fail closed with 503
 * `antivirus_unavailable`: no row, no stored file, nothing in the index, no temp file. With clamd
 * back (same socket path), the same package is published and the index verifies.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { waitUntilReady } from '../../harness/service.js';
import { startClamd, type RunningClamd } from '../helpers/clamd.js';
import { exec } from '../helpers/apt.js';
import { makeTempDir } from '../helpers/tmp.js';
import { adminToken, call, leftoverTempFiles, startService, uploadFile, verifyAptRepository, waitUpToDate, type RunningService } from './support.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads a Server-Sent Events answer, calling `onEvent` for each event as it arrives. */
async function readEvents(res: Response, onEvent: (event: string, data: Record<string, unknown>) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const event = /^event: (.+)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.+)$/m.exec(block)?.[1];
      onEvent(event, data ? (JSON.parse(data) as Record<string, unknown>) : {});
    }
  }
}

describe('clamd killed mid-scan', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  const daemons: RunningClamd[] = [];
  let service: RunningService | null = null;
  let socketLink: string;

  /** Starts a clamd and points the socket path the service was given at it. */
  const startAt = async () => {
    const clamd = await startClamd();
    daemons.push(clamd);
    await rm(socketLink, { force: true });
    await symlink(clamd.socket, socketLink);
    return clamd;
  };

  before(async () => {
    work = await makeTempDir('tollgate-clamd-fault-');
    socketLink = join(work.dir, 'clamd.sock');
  });
  after(async () => {
    await service?.kill();
    for (const d of daemons) await d.stop().catch(() => undefined);
    await work?.cleanup();
  });

  it('refuses the upload fail-closed with 503 and publishes nothing, then publishes it once clamd is back', async () => {
    let clamd = await startAt();
    const dataDir = join(work.dir, 'data');
    service = await startService(dataDir, { CLAMAV_SOCKET: socketLink });
    const { base } = service;
    const token = await adminToken(base, dataDir);

    const first = await uploadFile(base, token, await buildDeb(work.dir, { name: 'scanned-ok', version: '1.0' }));
    assert.equal(first.status, 201, first.text);
    assert.equal((first.body.pipeline as Record<string, string>).antivirus, 'clean');

    // 1 MiB of random bytes: more than a socket buffer, so the service is mid-INSTREAM when clamd dies.
    const victims = await Promise.all(['victim-plain', 'victim-stream'].map((name) =>
      buildDeb(work.dir, { name, version: '1.0', compression: 'gzip', files: { [`usr/share/${name}/blob`]: randomBytes(1024 * 1024) } })));

    // Plain /upload: clamd stopped, the upload waits on it; clamd killed while it waits.
    process.kill(clamd.pid, 'SIGSTOP');
    let answered = false;
    const pending = uploadFile(base, token, victims[0]!).finally(() => {
      answered = true;
    });
    await sleep(1500);
    assert.equal(answered, false, 'the upload was waiting on clamd when it was killed');
    process.kill(clamd.pid, 'SIGKILL');
    const plain = await pending;
    assert.equal(plain.status, 503, plain.text);
    assert.equal(plain.body.code, 'antivirus_unavailable');

    // /upload/stream: clamd killed once the antivirus step has started.
    clamd = await startAt();
    await waitUntilReady(base, 'ready with clamd back');
    process.kill(clamd.pid, 'SIGSTOP');
    const form = await multipartBody({ distribution: 'jammy' }, { path: victims[1]! });
    const res = await fetch(`${base}/upload/stream`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...form.headers }, body: form.payload });
    assert.equal(res.status, 200);
    const events: Array<{ event: string; data: Record<string, unknown> }> = [];
    await readEvents(res, (event, data) => {
      events.push({ event, data });
      if (event === 'step' && data.step === 'antivirus' && data.state === 'started') {
        setTimeout(() => process.kill(clamd.pid, 'SIGKILL'), 500);
      }
    });
    const last = events.at(-1)!;
    assert.equal(last.event, 'error', JSON.stringify(events));
    assert.equal(last.data.http_status, 503);
    assert.equal(last.data.code, 'antivirus_unavailable');
    assert.ok(!events.some((e) => e.event === 'step' && e.data.step === 'signature'), 'no step after the antivirus ran');

    // Fail-closed: nothing of either victim anywhere, and the service reports itself not ready.
    assert.equal(service.exited(), false, service.output());
    assert.equal((await fetch(`${base}/health/ready`)).status, 503);
    for (const name of ['victim-plain', 'victim-stream']) {
      assert.equal((await call(base, token, 'GET', `/artifacts/${name}`)).status, 404, `${name} has a row`);
    }
    const stored = (await exec('find', [join(dataDir, 'store'), join(dataDir, 'quarantine'), '-type', 'f'])).stdout.split('\n').filter(Boolean);
    assert.equal(stored.length, 1, `only the first package is stored: ${stored.join(', ')}`);
    assert.deepEqual(await leftoverTempFiles(dataDir), []);
    assert.deepEqual(await readdir(join(dataDir, 'tmp')), []);
    const packages = await (await fetch(`${base}/repo/apt/dists/jammy/main/binary-amd64/Packages`)).text();
    assert.doesNotMatch(packages, /victim/);

    // clamd back at the same socket: the service recovers without a restart and publishes both.
    clamd = await startAt();
    await waitUntilReady(base, 'ready with clamd back');
    for (const path of victims) {
      const again = await uploadFile(base, token, path);
      assert.equal(again.status, 201, again.text);
      assert.equal((again.body.pipeline as Record<string, string>).antivirus, 'clean');
    }
    await waitUpToDate(base, token);
    const indexed = await verifyAptRepository(base, work.dir, 'jammy', ['scanned-ok', 'victim-plain', 'victim-stream']);
    assert.deepEqual(indexed, new Set(['scanned-ok', 'victim-plain', 'victim-stream']));
  });
});
