import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
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
    } else if (req.url === '/to-file') {
      res.writeHead(302, { location: `file://${join(dir, 'feeds', 'inside.json')}` }).end();
    } else if (req.url === '/to-https') {
      res.writeHead(301, { location: `https://127.0.0.1:1/epss.csv` }).end();
    } else if (req.url?.startsWith('/loop')) {
      res.writeHead(302, { location: `/loop${Number(req.url.slice(5) || 0) + 1}` }).end();
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

async function rejectsWith(p: Promise<unknown>, code: string): Promise<DomainError> {
  let caught: unknown;
  await assert.rejects(p, (err: unknown) => {
    caught = err;
    return err instanceof DomainError && err.code === code;
  });
  return caught as DomainError;
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

describe('fetchFeed from file:// is confined to FEEDS_DIR; every refusal says the same', () => {
  let feeds: string;
  before(() => {
    feeds = join(dir, 'feeds');
    mkdirSync(join(feeds, 'sub'), { recursive: true });
    writeFileSync(join(feeds, 'inside.json'), '[]');
    writeFileSync(join(feeds, 'sub', 'deeper.json'), '[]');
    writeFileSync(join(dir, 'secret.txt'), 'not for feeds');
    symlinkSync(join(dir, 'secret.txt'), join(feeds, 'link-out.json'));
    symlinkSync(dir, join(feeds, 'dir-out'));
    symlinkSync(join(feeds, 'sub', 'deeper.json'), join(feeds, 'link-in.json'));
    assert.equal(spawnSync('mkfifo', [join(feeds, 'fifo.json')]).status, 0);
  });
  const get = (url: string, fileRoot: string | null = feeds) => fetchFeed(url, { maxBytes: 1024, destPath: join(dir, 'confined-copy'), fileRoot });

  it('reads files under FEEDS_DIR, also through a link that stays inside', async () => {
    assert.equal((await get(pathToFileURL(join(feeds, 'inside.json')).href)).status, 'downloaded');
    assert.equal((await get(pathToFileURL(join(feeds, 'sub', 'deeper.json')).href)).status, 'downloaded');
    assert.equal((await get(pathToFileURL(join(feeds, 'link-in.json')).href)).status, 'downloaded');
  });

  it('refuses /etc/passwd, a .. escape, links out of the folder, a FIFO, and file:// without FEEDS_DIR, as it refuses a missing file', async () => {
    const refusals = [
      () => get('file:///etc/passwd'),
      () => get(`file://${feeds}/../secret.txt`),
      () => get(`file://${feeds}/%2e%2e/secret.txt`),
      () => get(pathToFileURL(join(feeds, 'link-out.json')).href),
      () => get(pathToFileURL(join(feeds, 'dir-out', 'secret.txt')).href),
      () => get(pathToFileURL(join(feeds, 'fifo.json')).href),
      () => get(pathToFileURL(feeds).href),
      () => get(pathToFileURL(join(feeds, 'inside.json')).href, null),
      () => get(pathToFileURL(join(feeds, 'absent.json')).href),
      () => get('file:///etc/no-such-file'),
    ];
    const errors: DomainError[] = [];
    for (const refusal of refusals) errors.push(await rejectsWith(refusal(), 'feed_fetch_failed'));
    const messages = new Set(errors.map((e) => e.message));
    assert.equal(messages.size, 1, [...messages].join('\n'));
    assert.doesNotMatch([...messages][0]!, /passwd|secret|absent|exist|ENOENT|outside/i);
    assert.ok(errors.every((e) => Object.keys(e.extra).length === 0), 'no detail beside the message');
    noPartials();
  });

  it('answers an unreachable host, a 404 and a refused redirect with that same message', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const local = await rejectsWith(get(pathToFileURL(join(feeds, 'absent.json')).href), 'feed_fetch_failed');
    for (const url of [`http://127.0.0.1:${port}/x`, `${base}/missing`, `${base}/to-file`, `${base}/to-https`, `${base}/loop0`]) {
      const err = await rejectsWith(get(url), 'feed_fetch_failed');
      assert.equal(err.message, local.message, url);
    }
  });

  it('follows a redirect to the same scheme, and never to file:', async () => {
    assert.equal((await get(`${base}/moved`)).status, 'downloaded');
    const before = seen.length;
    await rejectsWith(get(`${base}/to-file`), 'feed_fetch_failed');
    assert.equal(seen.length, before + 1, 'one request, no file read');
    await rejectsWith(get(`${base}/loop0`), 'feed_fetch_failed');
    assert.ok(seen.length - before <= 7, `stopped after a few redirects (${seen.length - before} requests)`);
  });
});

describe('fetchFeed from file://', () => {
  it('copies the file and uses size+mtime validators', async () => {
    const src = join(dir, 'kev-src.json');
    writeFileSync(src, '{"vulnerabilities": []}');
    utimesSync(src, new Date('2024-06-01T12:00:00Z'), new Date('2024-06-01T12:00:00Z'));
    const dest = join(dir, 'kev.json');
    const r = await fetchFeed(pathToFileURL(src).href, { maxBytes: 1024, destPath: dest, fileRoot: dir });
    assert.ok(r.status === 'downloaded');
    assert.equal(readFileSync(dest, 'utf8'), '{"vulnerabilities": []}');
    assert.equal(r.last_modified, LAST_MODIFIED);
    assert.deepEqual(await fetchFeed(pathToFileURL(src).href, { maxBytes: 1024, destPath: dest, etag: r.etag, fileRoot: dir }), { status: 'not_modified' });
    assert.deepEqual(await fetchFeed(pathToFileURL(src).href, { maxBytes: 1024, destPath: dest, lastModified: LAST_MODIFIED, fileRoot: dir }), { status: 'not_modified' });
    writeFileSync(src, '{"vulnerabilities": [1]}');
    assert.equal((await fetchFeed(pathToFileURL(src).href, { maxBytes: 1024, destPath: dest, etag: r.etag, fileRoot: dir })).status, 'downloaded');
  });

  it('enforces maxBytes and reports missing files', async () => {
    const src = join(dir, 'big.bin');
    writeFileSync(src, Buffer.alloc(4096));
    await rejectsWith(fetchFeed(pathToFileURL(src).href, { maxBytes: 1024, destPath: join(dir, 'big-copy'), fileRoot: dir }), 'feed_too_large');
    await rejectsWith(fetchFeed(pathToFileURL(join(dir, 'absent')).href, { maxBytes: 1024, destPath: join(dir, 'y'), fileRoot: dir }), 'feed_fetch_failed');
    await rejectsWith(fetchFeed(pathToFileURL(dir).href, { maxBytes: 1024, destPath: join(dir, 'y'), fileRoot: dir }), 'feed_fetch_failed');
  });
});
