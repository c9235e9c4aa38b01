import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';

describe('health, metrics, docs, headers', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { CORS_ORIGINS: 'https://ui.example.org' } });
  });
  after(() => t.close());

  it('reports live, ready, and components truthfully', async () => {
    assert.deepEqual((await t.app.inject('/health/live')).json(), { status: 'ok' });
    assert.deepEqual((await t.app.inject('/api/v1/health/ready')).json(), { status: 'ok', ready: true });
    const health = (await t.app.inject('/health')).json();
    assert.equal(health.status, 'ok');
    assert.equal(health.version, 'v0.1.0');
    assert.equal(typeof health.uptime_seconds, 'number');
    assert.equal(health.components.database.ok, true);
    assert.equal(health.components.clamav.configured, false);
    assert.equal(health.components.clamav.ok, false, 'an unconfigured component never claims ok');
    assert.deepEqual([health.components.redis.configured, health.components.redis.ok], [false, false], 'no REDIS_URL: rate limits counted per replica');
  });

  it('answers 503 on /health/ready while the database does not answer', async () => {
    const down = await startTestApp();
    await down.ctx.db.destroy();
    const res = await down.app.inject('/health/ready');
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().ready, false);
    assert.ok(res.json().failing.includes('database'), String(res.json().failing));
    await down.app.close();
  });

  it('exposes http and tollgate metrics with route templates as path', async () => {
    const admin = await t.tokenFor('admin');
    await t.app.inject({ method: 'GET', url: '/api/auth/users/someone', headers: bearer(admin) });
    const text = (await t.app.inject('/metrics')).body;
    assert.match(text, /http_requests_total\{method="GET",path="\/auth\/users\/:username",status="404"\} 1/);
    assert.match(text, /http_request_duration_seconds_bucket/);
    assert.match(text, /# TYPE tollgate_uploads_total counter/);
    assert.match(text, /# TYPE tollgate_packages_total gauge/);
  });

  it('serves the generated OpenAPI document and docs outside production', async () => {
    const doc = (await t.app.inject('/openapi.json')).json();
    assert.equal(doc.openapi.startsWith('3.'), true);
    assert.ok(doc.paths['/auth/token']);
    assert.ok(!Object.keys(doc.paths).some((p: string) => p.startsWith('/api/')), 'aliases are not documented twice');
    assert.equal((await t.app.inject('/docs')).statusCode < 400, true);
  });

  it('sets security headers, request ids and CORS for configured origins only', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health/live', headers: { origin: 'https://ui.example.org', 'x-request-id': 'abc-123' } });
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-request-id'], 'abc-123');
    assert.equal(res.headers['access-control-allow-origin'], 'https://ui.example.org');
    const other = await t.app.inject({ method: 'GET', url: '/health/live', headers: { origin: 'https://evil.example' } });
    assert.equal(other.headers['access-control-allow-origin'], undefined);
  });
});

describe('production mode', () => {
  it('answers 404 for /docs and /openapi.json', async () => {
    const t = await startTestApp({ env: { ENV: 'production', JWT_SECRET_KEY: 'x'.repeat(16) + 'Y'.repeat(24) } });
    assert.equal((await t.app.inject('/docs')).statusCode, 404);
    assert.equal((await t.app.inject('/openapi.json')).statusCode, 404);
    await t.close();
  });
});
