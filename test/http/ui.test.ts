import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeTempDir } from '../helpers/tmp.js';

const INDEX = '<!doctype html><html><head><script type="module" src="/ui/assets/index-Ab12Cd.js"></script></head><body><div id="root"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(5000))});`;

describe('web interface files under /ui/', () => {
  let t: TestApp;
  let cleanup: () => Promise<void>;
  before(async () => {
    const tmp = await makeTempDir('tollgate-ui-');
    cleanup = tmp.cleanup;
    mkdirSync(join(tmp.dir, 'assets'));
    writeFileSync(join(tmp.dir, 'index.html'), INDEX);
    writeFileSync(join(tmp.dir, 'assets', 'index-Ab12Cd.js'), SCRIPT);
    writeFileSync(join(tmp.dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    t = await startTestApp({ env: { UI_DIR: tmp.dir } });
  });
  after(async () => {
    await t.close();
    await cleanup();
  });

  it('sends a browser asking for / to /ui/, and anything else asking for / gets the 404 it got before', async () => {
    const browser = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    assert.equal(browser.statusCode, 302);
    assert.equal(browser.headers.location, '/ui/');
    const client = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } });
    assert.equal(client.statusCode, 404);
    const bare = await t.app.inject({ method: 'GET', url: '/ui' });
    assert.equal(bare.statusCode, 301);
    assert.equal(bare.headers.location, '/ui/');
  });

  it('answers index.html revalidated on every load, with a content security policy', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui/', headers: { accept: 'text/html' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, INDEX);
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(String(res.headers['content-security-policy']), /script-src 'self'/);
    const again = await t.app.inject({ method: 'GET', url: '/ui/', headers: { 'if-none-match': String(res.headers.etag) } });
    assert.equal(again.statusCode, 304);
  });

  it('answers hashed assets cached for a year, gzipped when the browser accepts it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui/assets/index-Ab12Cd.js', headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(res.headers['content-encoding'], 'gzip');
    assert.match(String(res.headers['content-type']), /^text\/javascript/);
    assert.equal(gunzipSync(res.rawPayload).toString(), SCRIPT);
    const plain = await t.app.inject({ method: 'GET', url: '/ui/assets/index-Ab12Cd.js' });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.body, SCRIPT);
    const icon = await t.app.inject({ method: 'GET', url: '/ui/favicon.svg' });
    assert.equal(icon.headers['cache-control'], 'no-cache', 'a file without a hash in its name is revalidated');
  });

  it('answers the application for a deep link or reload of one of its pages, a 404 for a missing asset', async () => {
    for (const url of ['/ui/packages', '/ui/packages/libssl3.0', '/ui/review?severity=critical']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, INDEX, url);
    }
    const missing = await t.app.inject({ method: 'GET', url: '/ui/assets/gone-123.js', headers: { accept: 'text/html' } });
    assert.equal(missing.statusCode, 404);
    const traversal = await t.app.inject({ method: 'GET', url: '/ui/..%2f..%2fpackage.json' });
    assert.equal(traversal.statusCode, 404);
  });

  it('leaves the API its root paths', async () => {
    for (const url of ['/packages/', '/distributions/', '/artifacts/']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
      assert.equal(res.statusCode, 401, url);
      assert.equal(res.json().code, 'not_authenticated');
    }
  });
});

describe('web interface not built', () => {
  it('still starts, and /ui/ says the interface is not built', async () => {
    const tmp = await makeTempDir('tollgate-ui-none-');
    const t = await startTestApp({ env: { UI_DIR: join(tmp.dir, 'missing') } });
    try {
      const res = await t.app.inject({ method: 'GET', url: '/ui/', headers: { accept: 'text/html' } });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().code, 'ui_not_built');
    } finally {
      await t.close();
      await tmp.cleanup();
    }
  });
});
