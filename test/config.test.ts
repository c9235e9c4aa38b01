import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';
import { makeTempDir } from './helpers/tmp.js';

describe('configuration', () => {
  it('refuses to start in production without a strong JWT_SECRET_KEY', async () => {
    const { dir, cleanup } = await makeTempDir();
    for (const secret of [undefined, 'short', 'changeme', 'secret']) {
      const env: Record<string, string> = { ENV: 'production', DATA_DIR: dir };
      if (secret) env.JWT_SECRET_KEY = secret;
      assert.throws(() => loadConfig(env), ConfigError, String(secret));
    }
    assert.equal(loadConfig({ ENV: 'production', DATA_DIR: dir, JWT_SECRET_KEY: 'k'.repeat(40) }).jwtSecret, 'k'.repeat(40));
    await cleanup();
  });

  it('generates a development secret once and keeps it in DATA_DIR (0600)', async () => {
    const { dir, cleanup } = await makeTempDir();
    const a = loadConfig({ DATA_DIR: dir });
    const b = loadConfig({ DATA_DIR: dir });
    assert.equal(a.jwtSecret, b.jwtSecret);
    assert.ok(existsSync(`${dir}/jwt-secret`));
    assert.equal(statSync(`${dir}/jwt-secret`).mode & 0o777, 0o600);
    assert.equal(readFileSync(`${dir}/jwt-secret`, 'utf8'), a.jwtSecret);
    assert.deepEqual(readdirSync(dir), ['jwt-secret'], 'no temporary file is left');
    await cleanup();
  });

  it('replaces a damaged development secret (empty or cut short) instead of signing with it', async () => {
    const { dir, cleanup } = await makeTempDir();
    for (const damaged of ['', 'abc\n', 'x'.repeat(31)]) {
      writeFileSync(join(dir, 'jwt-secret'), damaged, { mode: 0o644 });
      const { jwtSecret } = loadConfig({ DATA_DIR: dir });
      assert.ok(jwtSecret.length >= 32, JSON.stringify(damaged));
      assert.equal(readFileSync(join(dir, 'jwt-secret'), 'utf8'), jwtSecret);
      assert.equal(statSync(join(dir, 'jwt-secret')).mode & 0o777, 0o600);
      assert.equal(loadConfig({ DATA_DIR: dir }).jwtSecret, jwtSecret);
    }
    assert.deepEqual(readdirSync(dir), ['jwt-secret']);
    await cleanup();
  });

  it('APP_URL must be an absolute http(s) URL a shell cannot misread', () => {
    for (const bad of ["https://x.example/'; rm -rf ~; echo '", 'javascript:alert(1)', 'https://u:p@x.example', 'https://x.example/?a=1', 'x.example', 'https://x.example/$(id)']) {
      assert.throws(() => loadConfig({ APP_URL: bad }), /APP_URL must be an absolute http/, bad);
    }
    assert.equal(loadConfig({ APP_URL: 'https://tollgate.example.org/' }).appUrl, 'https://tollgate.example.org');
    assert.equal(loadConfig({ PORT: '9000' }).appUrl, 'http://localhost:9000');
  });

  it('FEEDS_DIR and CA_BUNDLE_DIR: unset = none allowed; set = an existing folder', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      const none = loadConfig({ DATA_DIR: dir });
      assert.equal(none.feedsDir, null);
      assert.equal(none.caBundleDir, null);
      const set = loadConfig({ DATA_DIR: dir, FEEDS_DIR: dir, CA_BUNDLE_DIR: dir });
      assert.equal(set.feedsDir, dir);
      assert.equal(set.caBundleDir, dir);
      assert.throws(() => loadConfig({ DATA_DIR: dir, FEEDS_DIR: `${dir}/missing` }), /FEEDS_DIR must name an existing folder/);
      assert.throws(() => loadConfig({ DATA_DIR: dir, CA_BUNDLE_DIR: '/' }), /CA_BUNDLE_DIR must name an existing folder other than \//);
    } finally {
      await cleanup();
    }
  });

  it('rejects malformed values with a clear message', () => {
    assert.throws(() => loadConfig({ PORT: 'eighty' }), /PORT must be an integer/);
    assert.throws(() => loadConfig({ EDITION: 'gold' }), /EDITION must be one of/);
    assert.throws(() => loadConfig({ DEB_PAYLOAD_CHECK: 'never' }), /DEB_PAYLOAD_CHECK must be one of background, upload/);
    assert.equal(loadConfig({}).debPayloadCheck, 'background');
    assert.equal(loadConfig({ DEB_PAYLOAD_CHECK: 'upload' }).debPayloadCheck, 'upload');
    assert.equal(loadConfig({}).importCatalogMemoryBytes, 256 * 1024 * 1024);
    assert.equal(loadConfig({ IMPORT_CATALOG_MEMORY_MB: '0' }).importCatalogMemoryBytes, 0);
    assert.throws(() => loadConfig({ IMPORT_CATALOG_MEMORY_MB: '-1' }), /IMPORT_CATALOG_MEMORY_MB/);
  });

  it('reads DISTRIBUTIONS_FILE at start-up, and a missing or malformed one stops the start naming it', async () => {
    const { dir, cleanup } = await makeTempDir();
    const file = join(dir, 'distributions.json');
    writeFileSync(file, JSON.stringify({ distributions: [{ codename: 'acme-lts', format: 'deb' }] }));
    assert.deepEqual(loadConfig({ DATA_DIR: dir, DISTRIBUTIONS_FILE: file }).distributionsFile, { path: file, content: { distributions: [{ codename: 'acme-lts', format: 'deb' }] } });
    assert.equal(loadConfig({ DATA_DIR: dir }).distributionsFile, null);
    writeFileSync(file, '{"distributions": [');
    assert.throws(() => loadConfig({ DATA_DIR: dir, DISTRIBUTIONS_FILE: file }), (e: unknown) => e instanceof ConfigError && e.message.startsWith(`DISTRIBUTIONS_FILE ${file}: `) && /JSON/.test(e.message));
    assert.throws(() => loadConfig({ DATA_DIR: dir, DISTRIBUTIONS_FILE: join(dir, 'absent.json') }), (e: unknown) => e instanceof ConfigError && /absent\.json: ENOENT/.test(e.message));
    await cleanup();
  });
});
