import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb } from '../../harness/debs.js';
import { checkErrorAnswer } from '../helpers/errors.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A request whose path goes on the wire exactly as written (no client-side normalisation of `..` or `%2e`). */
function raw(port: number, path: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        checkErrorAnswer(options.method ?? 'GET', path, res.statusCode!, body);
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /repo/: the published tree, read-only', () => {
  let t: TestApp;
  let port: number;
  let work: { dir: string; cleanup: () => Promise<void> };
  let debPool: string;
  let rpmPool: string;
  let plusPools: string[];
  const get = (path: string, headers: Record<string, string> = {}) => raw(port, path, { headers });

  before(async () => {
    work = await makeTempDir('tollgate-serving-');
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
    const admin = await t.tokenFor('admin');
    for (const [path, distribution] of [
      [await buildDeb(work.dir, { name: 'served', version: '1.0-1' }), 'jammy'],
      [await buildRpm(work.dir, { name: 'served-rpm', version: '1.0', files: { '/usr/share/served/a': 'a\n' }, noAutoReqProv: true }), 'rocky9'],
      // Real-world spellings: `+` (binNMU, +dfsg, +deb12u1), `~` (backports, pre-releases), epochs.
      [await buildDeb(work.dir, { name: 'plus-served', version: '1:1.5.0+ds1-1+b4~bpo12+1' }), 'jammy'],
      [await buildRpm(work.dir, { name: 'plus-served-rpm', version: '2.0+git20240101~rc1', release: '1.el9+p1', epoch: 3, files: { '/usr/share/plus/a': 'a\n' }, noAutoReqProv: true }), 'rocky9'],
    ] as const) {
      const form = await multipartBody({ distribution }, { path });
      const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
      assert.equal(res.statusCode, 201, res.body);
    }
    // The .debs' payloads are read behind their uploads, and their Contents lines re-sign the
    // index: wait, so that the conditional-request tests see one InRelease throughout.
    await t.ctx.repo.fileLists.idle();
    const rows = await t.ctx.db.selectFrom('packages').select(['name', 'pool_path']).execute();
    const poolOf = (name: string) => rows.find((r) => r.name === name)!.pool_path;
    debPool = poolOf('served');
    rpmPool = poolOf('served-rpm');
    plusPools = [poolOf('plus-served'), poolOf('plus-served-rpm')];
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  it('serves InRelease without authentication, with ETag and Last-Modified, and answers conditional GETs with 304', async () => {
    const path = '/repo/apt/dists/jammy/InRelease';
    const res = await get(path);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, await readFile(join(t.dataDir, 'repo', 'apt', 'dists', 'jammy', 'InRelease')));
    assert.match(res.headers['content-type'] ?? '', /^text\/plain/);
    assert.equal(res.headers['cache-control'], 'no-cache', 'indexes change in place');
    const etag = res.headers.etag!;
    const lastModified = res.headers['last-modified']!;
    assert.ok(etag, 'ETag');
    assert.ok(!Number.isNaN(Date.parse(lastModified)), 'Last-Modified');
    const byEtag = await get(path, { 'if-none-match': etag });
    assert.equal(byEtag.status, 304);
    assert.equal(byEtag.body.length, 0);
    const byDate = await get(path, { 'if-modified-since': lastModified });
    assert.equal(byDate.status, 304);
    const stale = await get(path, { 'if-none-match': '"something-else"' });
    assert.equal(stale.status, 200);
    const head = await raw(port, path, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(Number(head.headers['content-length']), res.body.length);
  });

  it('leaves no file open, whatever the answer (HEAD, 304, 206, 416)', async () => {
    const path = '/repo/apt/dists/jammy/InRelease';
    const etag = (await get(path)).headers.etag!;
    const open = async () => (await readdir('/proc/self/fd')).length;
    const before = await open();
    for (let i = 0; i < 50; i++) {
      assert.equal((await raw(port, path, { method: 'HEAD' })).status, 200);
      assert.equal((await get(path, { 'if-none-match': etag })).status, 304);
      assert.equal((await get(path, { range: 'bytes=0-9' })).status, 206);
      const refused = await get(path, { range: 'bytes=999999-' });
      assert.equal(refused.status, 416);
      assert.equal(refused.headers['content-range'], `bytes */${(await readFile(join(t.dataDir, 'repo', 'apt', 'dists', 'jammy', 'InRelease'))).length}`);
    }
    await new Promise((r) => setTimeout(r, 200));
    assert.ok((await open()) - before < 10, `file descriptors grew from ${before} to ${await open()}`);
  });

  it('serves files whose names hold `+`, `~` or `:` however the client percent-encodes them (apt sends %2b)', async () => {
    assert.match(plusPools[0]!, /\+ds1-1\+b4~bpo12\+1_amd64\.deb$/, 'epoch left out of the .deb file name');
    assert.match(plusPools[1]!, /\+git20240101~rc1-1\.el9\+p1\.x86_64\.rpm$/);
    for (const pool of plusPools) {
      const file = await readFile(join(t.dataDir, 'repo', pool));
      const spellings = [
        pool,
        pool.replace(/\+/g, '%2b'),
        pool.replace(/\+/g, '%2B').replace(/~/g, '%7e'),
        pool.replace(/\+/g, '%2B').replace(/~/g, '%7E').replace(/\./g, '%2e'),
        pool.split('/').map(encodeURIComponent).join('/'),
      ];
      for (const spelling of spellings) {
        const res = await get(`/repo/${spelling}`);
        assert.equal(res.status, 200, spelling);
        assert.deepEqual(res.body, file, spelling);
      }
    }
    assert.equal((await get('/repo/keys/tollgate%2Easc')).status, 200);
    // A colon (epochs in some clients' paths) decodes too; no such file here, so a clean 404.
    const missing = await get('/repo/apt/pool/main/p/plus-served/plus-served_1%3a1.5.0_amd64.deb');
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.body.toString()).code, 'not_found');
    const undecodable = await get('/repo/keys/tollgate%zz.asc');
    assert.equal(undecodable.status, 400);
    assert.equal(JSON.parse(undecodable.body.toString()).code, 'invalid_path');
  });

  it('answers a Range request with 206 and exactly the requested bytes', async () => {
    const file = await readFile(join(t.dataDir, 'repo', debPool));
    const res = await get(`/repo/${debPool}`, { range: 'bytes=8-67' });
    assert.equal(res.status, 206);
    assert.equal(res.headers['content-range'], `bytes 8-67/${file.length}`);
    assert.deepEqual(res.body, file.subarray(8, 68));
    const tail = await get(`/repo/${debPool}`, { range: 'bytes=-10' });
    assert.equal(tail.status, 206);
    assert.deepEqual(tail.body, file.subarray(file.length - 10));
    const unsatisfiable = await get(`/repo/${debPool}`, { range: `bytes=${file.length + 10}-` });
    assert.equal(unsatisfiable.status, 416);
    assert.equal(res.headers['accept-ranges'], 'bytes');
  });

  it('sends the content type of each kind of file', async () => {
    const repomdDir = join(t.dataDir, 'repo', 'rpm', 'rocky9', 'x86_64', 'repodata');
    const primary = (await readdir(repomdDir)).find((f) => f.endsWith('-primary.xml.gz'))!;
    const cases: Array<[string, RegExp]> = [
      [`/repo/${debPool}`, /^application\/vnd\.debian\.binary-package$/],
      [`/repo/${rpmPool}`, /^application\/x-rpm$/],
      ['/repo/apt/dists/jammy/main/binary-amd64/Packages', /^text\/plain/],
      ['/repo/apt/dists/jammy/main/binary-amd64/Packages.gz', /^application\/gzip$/],
      ['/repo/apt/dists/jammy/main/binary-amd64/Packages.xz', /^application\/x-xz$/],
      ['/repo/apt/dists/jammy/Release', /^text\/plain/],
      ['/repo/apt/dists/jammy/Release.gpg', /^application\/pgp/],
      ['/repo/rpm/rocky9/x86_64/repodata/repomd.xml', /^(application|text)\/xml/],
      ['/repo/rpm/rocky9/x86_64/repodata/repomd.xml.asc', /^application\/pgp/],
      [`/repo/rpm/rocky9/x86_64/repodata/${primary}`, /^application\/gzip$/],
      ['/repo/keys/tollgate.asc', /^application\/pgp-keys$/],
      ['/repo/keys/tollgate.gpg', /^application\/pgp-keys$/],
    ];
    for (const [path, type] of cases) {
      const res = await get(path);
      assert.equal(res.status, 200, path);
      assert.match(res.headers['content-type'] ?? '', type, path);
    }
    assert.match((await get(`/repo/${debPool}`)).headers['cache-control'] ?? '', /immutable/);
  });

  it('never serves anything outside DATA_DIR/repo, however the path is written', async () => {
    const secrets = await Promise.all(['jwt-secret', 'initial-admin-password'].map((f) => readFile(join(t.dataDir, f), 'utf8')));
    const keyFile = (await readdir(join(t.dataDir, 'keys'))).find((f) => f.endsWith('.key'))!;
    const attempts = [
      '/repo/../tollgate.db',
      '/repo/../jwt-secret',
      '/repo/%2e%2e/tollgate.db',
      '/repo/%2e%2e/jwt-secret',
      '/repo/%2E%2E%2Fjwt-secret',
      '/repo/..%2fjwt-secret',
      '/repo/..%5cjwt-secret',
      '/repo/..\\jwt-secret',
      '/repo/keys/../../jwt-secret',
      '/repo/keys/%2e%2e/%2e%2e/jwt-secret',
      `/repo/keys/../../keys/${keyFile}`,
      `/repo/keys/%2e%2e%2f%2e%2e%2fkeys%2f${keyFile}`,
      '/repo/%252e%252e/jwt-secret',
      '/repo/apt/../../initial-admin-password',
      '/repo//../jwt-secret',
      '/repo/.%2e/jwt-secret',
      '/repo/keys/tollgate.asc%00',
      '/repo/keys/tollgate.asc%00.txt',
      '/repo/%00/../jwt-secret',
      '/repo/keys%00/../../jwt-secret',
      '/repo/' + '../'.repeat(20) + 'etc/passwd',
      '/repo/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
    ];
    for (const path of attempts) {
      const res = await get(path);
      const text = res.body.toString('latin1');
      assert.ok([400, 403, 404].includes(res.status), `${path} → ${res.status}`);
      for (const secret of secrets) assert.ok(!text.includes(secret.trim()), `${path} leaked a secret`);
      assert.ok(!text.includes('SQLite format'), `${path} leaked the database`);
      assert.ok(!text.includes('PRIVATE KEY'), `${path} leaked a private key`);
      assert.ok(!text.includes('root:x:0:0'), `${path} leaked /etc/passwd`);
      if (res.status >= 400) assert.equal(typeof JSON.parse(res.body.toString('utf8') || '{}').code, 'string', `${path}: error body`);
    }
  });

  it('refuses dotfiles, directory listings and writes', async () => {
    await writeFile(join(t.dataDir, 'repo', 'apt', '.secret'), 'hidden');
    for (const path of ['/repo/apt/.secret', '/repo/apt/%2esecret', '/repo/apt/dists/jammy/main/binary-amd64/by-hash/.generations.json', '/repo/.git/config']) {
      const res = await get(path);
      assert.ok([403, 404].includes(res.status), `${path} → ${res.status}`);
      assert.ok(!res.body.toString().includes('hidden'));
    }
    for (const path of ['/repo/', '/repo/apt/', '/repo/apt/pool/main/s/served/', '/repo/keys']) {
      const res = await get(path);
      assert.ok([403, 404].includes(res.status), `${path} → ${res.status}`);
    }
    for (const method of ['PUT', 'POST', 'DELETE']) {
      const res = await raw(port, '/repo/keys/tollgate.asc', { method });
      assert.ok([404, 405].includes(res.status), `${method} → ${res.status}`);
    }
    assert.equal((await get('/repo/keys/tollgate.asc')).status, 200, 'still served');
  });
});
