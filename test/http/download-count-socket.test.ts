import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { makeTempDir } from '../helpers/tmp.js';

/**
 * Over a real socket a client that has every byte hangs up at once (curl, apt-get download). The
 * response must be ended by then, or the download looks broken off and is not counted: before the
 * file stream was bounded by its length, about 1 in 40 such downloads went uncounted.
 */
describe('downloads over a real socket: every complete transfer is counted', () => {
  let t: TestApp;
  let work: { dir: string; cleanup: () => Promise<void> };
  let url: string;
  let admin: string;

  before(async () => {
    work = await makeTempDir('tollgate-download-socket-');
    t = await startTestApp();
    admin = await t.tokenFor('admin');
    const deb = await buildDeb(work.dir, { name: 'socket-count', version: '1.0-1', files: { 'usr/share/socket-count/f': 'x'.repeat(200_000) } });
    const form = await multipartBody({ distribution: 'jammy' }, { path: deb });
    const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
    assert.equal(res.statusCode, 201, res.body);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const path = (await t.ctx.db.selectFrom('packages').select('pool_path').executeTakeFirstOrThrow()).pool_path;
    url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/repo/${path}`;
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  it('counts 200 curl downloads, 10 at a time, as 200', async () => {
    const N = 200;
    for (let i = 0; i < N; i += 10) {
      const codes = await Promise.all(Array.from({ length: 10 }, () => new Promise<number | null>((resolve) => {
        spawn('curl', ['-sf', '-o', '/dev/null', url]).on('close', resolve);
      })));
      assert.deepEqual(codes, Array(10).fill(0));
    }
    // The last responses' hooks run just after curl has the bytes.
    await new Promise((r) => setTimeout(r, 200));
    const stats = (await t.app.inject({ method: 'GET', url: '/downloads/stats?days=7', headers: bearer(admin) })).json();
    assert.equal(stats.total, N);
  });
});
