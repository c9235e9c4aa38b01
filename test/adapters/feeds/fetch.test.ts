import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { fetchFeed } from '../../../src/adapters/feeds/fetch.js';
import { DomainError } from '../../../src/domain/errors.js';
import { makeTempDir } from '../../helpers/tmp.js';

const BODY = Buffer.from('cve,epss,percentile\nCVE-2023-4911,0.79331,0.98513\n');
const ETAG = '"epss-2024-06-01"';
const LAST_MODIFIED = 'Sat, 01 Jun 2024 12:00:00 GMT';

let server: Server;
let base: string;
let dir: string;
let cleanup: () => Promise<void>;
const seen: Array<Record<string, string | string[] | undefined>> = [];

before(async () => {
  ({ dir, cleanup } = await makeTempDir('tollgate-fetch-'));
  server = createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/epss.csv') {
      if (req.headers['if-none-match'] === ETAG || req.headers['if-modified-since'] === LAST_MODIFIED) {
        res.writeHead(304).end();
        return;
      }
      res.writeHead(200, { etag: ETAG, 'last-modified': LAST_MODIFIED, 'content-length': BODY.length }).end(BODY);
    } else if (req.url === '/moved') {
      res.writeHead(302, { location: '/epss.csv' }).end();
    } else if (req.url === '/endless') {
      // No Content-Length: the cap must apply while streaming.
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 0x41);
      let sent = 0;
      const pump = (): void => {
        while (sent < 64 && res.write(chunk)) sent++;
        if (sent >= 64) res.end();
        else res.once('drain', pump);
      };
      res.on('close', () => (sent = 64));
      pump();
    } else if (req.url === '/declared-large') {
      res.writeHead(200, { 'content-length': 10_000_000 }).end();
    } else {
      res.writeHead(404).end('nope');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections(); // undici keeps connections alive
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await cleanup();
});

async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof DomainError && err.code === code);
}
const noPartials = (): void => assert.deepEqual(readdirSync(dir).filter((f) => f.includes('.part-')), []);

describe('fetchFeed over http', () => {
  it('downloads with validators, then answers not_modified to a conditional request', async () => {
    const dest = join(dir, 'epss.csv');
    const r = await fetchFeed(`${base}/epss.csv`, { maxBytes: 1024, destPath: dest });
    assert.equal(r.status, 'downloaded');
    assert.ok(r.status === 'downloaded');
    assert.equal(r.bytes, BODY.length);
    assert.equal(r.sha256, createHash('sha256').update(BODY).digest('hex'));
    assert.equal(r.etag, ETAG);
    assert.equal(r.last_modified, LAST_MODIFIED);
    assert.deepEqual(readFileSync(dest), BODY);

    assert.deepEqual(await fetchFeed(`${base}/epss.csv`, { maxBytes: 1024, destPath: dest, etag: ETAG }), { status: 'not_modified' });
    assert.equal(seen.at(-1)?.['if-none-match'], ETAG);
    assert.deepEqual(await fetchFeed(`${base}/epss.csv`, { maxBytes: 1024, destPath: dest, lastModified: LAST_MODIFIED }), { status: 'not_modified' });
    assert.equal(seen.at(-1)?.['if-modified-since'], LAST_MODIFIED);
  });

  it('follows redirects', async () => {
    const r = await fetchFeed(`${base}/moved`, { maxBytes: 1024, destPath: join(dir, 'moved.csv') });
    assert.equal(r.status, 'downloaded');
  });

  it('stops at maxBytes while streaming and leaves no file behind', async () => {
    const dest = join(dir, 'endless.bin');
    await rejectsWith(fetchFeed(`${base}/endless`, { maxBytes: 256 * 1024, destPath: dest }), 'feed_too_large');
    assert.equal(existsSync(dest), false);
    noPartials();
    await rejectsWith(fetchFeed(`${base}/declared-large`, { maxBytes: 1024, destPath: dest }), 'feed_too_large');
  });

  it('reports HTTP errors and unreachable hosts as feed_fetch_failed', async () => {
    await rejectsWith(fetchFeed(`${base}/missing`, { maxBytes: 1024, destPath: join(dir, 'x') }), 'feed_fetch_failed');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await rejectsWith(fetchFeed(`http://127.0.0.1:${port}/x`, { maxBytes: 1024, destPath: join(dir, 'x') }), 'feed_fetch_failed');
    noPartials();
  });

  it('refuses other URL schemes', async () => {
    await rejectsWith(fetchFeed('ftp://127.0.0.1/x', { maxBytes: 1, destPath: join(dir, 'x') }), 'feed_url_unsupported');
    await rejectsWith(fetchFeed('not a url', { maxBytes: 1, destPath: join(dir, 'x') }), 'feed_url_invalid');
  });
});

describe('fetchFeed from file://', () => {
  it('copies the file and uses size+mtime validators', async () => {
    const src = join(dir, 'kev-src.json');
    writeFileSync(src, '{"vulnerabilities": []}');
    utimesSync(src, new Date('2024-06-01T12:00:00Z'), new Date('2024-06-01T12:00:00Z'));
    const dest = join(dir, 'kev.json');
    const r = await fetchFeed(pathToFileURL(src).href, { maxBytes: 1024, destPath: dest });
    assert.ok(r.status === 'downloaded');
    assert.equal(readFileSync(dest, 'utf8'), '{"vulnerabilities": []}');
    assert.equal(r.last_modified, LAST_MODIFIED);
    assert.deepEqual(await fetchFeed(pathToFileURL(src).href, { maxBytes: 1024, destPath: dest, etag: r.etag }), { status: 'not_modified' });
    assert.deepEqual(await fetchFeed(pathToFileURL(src).href, { maxBytes: 1024, destPath: dest, lastModified: LAST_MODIFIED }), { status: 'not_modified' });
    writeFileSync(src, '{"vulnerabilities": [1]}');
    assert.equal((await fetchFeed(pathToFileURL(src).href, { maxBytes: 1024, destPath: dest, etag: r.etag })).status, 'downloaded');
  });

  it('enforces maxBytes and reports missing files', async () => {
    const src = join(dir, 'big.bin');
    writeFileSync(src, Buffer.alloc(4096));
    await rejectsWith(fetchFeed(pathToFileURL(src).href, { maxBytes: 1024, destPath: join(dir, 'big-copy') }), 'feed_too_large');
    await rejectsWith(fetchFeed(pathToFileURL(join(dir, 'absent')).href, { maxBytes: 1024, destPath: join(dir, 'y') }), 'feed_fetch_failed');
    await rejectsWith(fetchFeed(pathToFileURL(dir).href, { maxBytes: 1024, destPath: join(dir, 'y') }), 'feed_fetch_failed');
  });
});
