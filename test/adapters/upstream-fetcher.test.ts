/**
 * fetchToFile (package and index downloads over node:http): the file and its digests, redirects
 * followed within http(s), 404 as null, other statuses, size caps (declared and streamed) and the
 * deadline as the errors the import reports.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fetchToFile } from '../../src/adapters/upstream/fetcher.js';
import { DomainError } from '../../src/domain/errors.js';

const body = Buffer.from('x'.repeat(70_000) + 'end');
const limits = { maxBytes: 1024 * 1024, timeoutMs: 5_000 };

describe('fetchToFile', () => {
  let server: Server;
  let base: string;
  let temp: string;
  before(async () => {
    temp = await mkdtemp(join(tmpdir(), 'fetcher-'));
    server = createServer((req, res) => {
      const path = req.url ?? '';
      if (path === '/file') return res.writeHead(200, { 'content-length': body.length }).end(body);
      if (path === '/chunked') {
        res.writeHead(200);
        res.write(body.subarray(0, 1000));
        setTimeout(() => res.end(body.subarray(1000)), 20);
        return;
      }
      if (path === '/moved') return res.writeHead(302, { location: '/again' }).end();
      if (path === '/again') return res.writeHead(301, { location: `${base}/file` }).end();
      if (path === '/loop') return res.writeHead(302, { location: '/loop' }).end();
      if (path === '/ftp') return res.writeHead(302, { location: 'ftp://example.org/x' }).end();
      if (path === '/gone') return res.writeHead(410).end();
      if (path === '/broken') return res.writeHead(500).end('no');
      if (path === '/stall') {
        res.writeHead(200, { 'content-length': 10 });
        res.write('abc');
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(temp, { recursive: true, force: true });
  });

  const code = async (work: Promise<unknown>) => {
    try {
      await work;
    } catch (error) {
      assert.ok(error instanceof DomainError, String(error));
      return `${error.code}: ${error.message}`;
    }
    return 'no error';
  };

  it('stores the body with its SHA-256, whether declared in length or chunked, and through redirects', async () => {
    for (const path of ['/file', '/chunked', '/moved']) {
      const file = await fetchToFile(`${base}${path}`, limits, temp);
      assert.ok(file, path);
      assert.equal(file.size, body.length);
      assert.equal(file.sha256, createHash('sha256').update(body).digest('hex'));
      assert.deepEqual(await readFile(file.path), body);
      await file.remove();
    }
    assert.deepEqual(await readdir(temp), [], 'no temp file left');
  });

  it('answers null for 404 and 410, an error for other statuses and bad redirects', async () => {
    assert.equal(await fetchToFile(`${base}/nothing`, limits, temp), null);
    assert.equal(await fetchToFile(`${base}/gone`, limits, temp), null);
    assert.match(await code(fetchToFile(`${base}/broken`, limits, temp)), /^upstream_unreachable: .*HTTP 500/);
    assert.match(await code(fetchToFile(`${base}/loop`, limits, temp)), /^upstream_unreachable: .*too many redirects/);
    assert.match(await code(fetchToFile(`${base}/ftp`, limits, temp)), /^invalid_url/);
    assert.match(await code(fetchToFile('http://127.0.0.1:1/x', limits, temp)), /^upstream_unreachable/);
  });

  it('refuses a body over the cap, declared or streamed, and a body that stalls past the deadline', async () => {
    assert.match(await code(fetchToFile(`${base}/file`, { ...limits, maxBytes: 100 }, temp)), /^upstream_too_large: .* is 70003 bytes/);
    assert.match(await code(fetchToFile(`${base}/chunked`, { ...limits, maxBytes: 2000 }, temp)), /^upstream_too_large: .* larger than 2000 bytes/);
    const started = Date.now();
    assert.match(await code(fetchToFile(`${base}/stall`, { ...limits, timeoutMs: 300 }, temp)), /^upstream_unreachable: .*timed out/);
    assert.ok(Date.now() - started < 3_000);
    assert.deepEqual(await readdir(temp), [], 'no temp file left');
  });
});
