import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { bearer, startTestApp, TEST_PASSWORD, type TestApp } from '../helpers/app.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('rate limits', () => {
  const apps: TestApp[] = [];
  after(async () => {
    for (const a of apps) await a.close();
  });

  it('answers the 11th login in a minute from one IP with 429, Retry-After and the error body', async () => {
    const t = await startTestApp({ env: { RATE_LIMITS: 'on' } });
    apps.push(t);
    for (let i = 0; i < 10; i++) {
      const r = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: `nobody${i}`, password: 'x' }, remoteAddress: '192.0.2.7' });
      assert.equal(r.statusCode, 401);
    }
    const limited = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'admin', password: t.adminPassword }, remoteAddress: '192.0.2.7' });
    assert.equal(limited.statusCode, 429);
    const retry = Number(limited.headers['retry-after']);
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${limited.headers['retry-after']}`);
    assert.equal(limited.json().code, 'rate_limited');
    assert.equal(typeof limited.json().detail, 'string');
    // another client is not affected
    const other = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'admin', password: t.adminPassword }, remoteAddress: '192.0.2.8' });
    assert.equal(other.statusCode, 200);
  });

  it('honours X-Forwarded-For only from TRUSTED_PROXIES', async () => {
    const t = await startTestApp({ env: { RATE_LIMITS: 'on', TRUSTED_PROXIES: '127.0.0.1' } });
    apps.push(t);
    // distinct usernames: the per-account lockout must not be what answers 429 here
    let n = 0;
    const login = (xff: string, remoteAddress: string) =>
      t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: `ghost${n++}`, password: 'x' }, remoteAddress, headers: { 'x-forwarded-for': xff } });
    for (let i = 0; i < 10; i++) await login(`198.51.100.${i}`, '127.0.0.1');
    // each forwarded client had one attempt: none is limited
    assert.equal((await login('198.51.100.1', '127.0.0.1')).statusCode, 401);
    // from an untrusted peer the header is ignored: the peer itself is the client
    for (let i = 0; i < 10; i++) await login(`203.0.113.${i}`, '192.0.2.50');
    const limited = await login('203.0.113.99', '192.0.2.50');
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().code, 'rate_limited');
  });

  it('applies the rate_limits setting (0 = off) without a restart', async () => {
    const t = await startTestApp({ env: { RATE_LIMITS: 'on' } });
    apps.push(t);
    const admin = await t.login('admin', t.adminPassword);
    await t.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload: { rate_limits: { login: 0 } } });
    await new Promise((r) => setTimeout(r, 2100)); // settings cache
    for (let i = 0; i < 15; i++) {
      const r = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: `x${i}`, password: 'y' }, remoteAddress: '192.0.2.9' });
      assert.equal(r.statusCode, 401, `attempt ${i}`);
    }
  });

  for (const redis of [false, true]) {
    it(`counts per route whichever prefix served it, concurrent requests included${redis ? ' (Redis)' : ''}`, async () => {
      const t = await startTestApp({ env: { RATE_LIMITS: 'on', ...(redis ? { REDIS_URL } : {}) } });
      apps.push(t);
      const ip = `198.19.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
      const prefixes = ['', '/api', '/api/v1'];
      // 10 logins a minute in all, spread over the three spellings of the route and sent at once.
      const attempts = await Promise.all(
        Array.from({ length: 15 }, (_, i) =>
          t.app.inject({ method: 'POST', url: `${prefixes[i % 3]}/auth/token`, payload: { username: `p${i}`, password: 'x' }, remoteAddress: ip })),
      );
      assert.deepEqual(attempts.map((r) => r.statusCode).sort(), [...Array(10).fill(401), ...Array(5).fill(429)]);
      // Forgot-password: 5 a minute whichever prefix.
      const forgot = await Promise.all(
        Array.from({ length: 9 }, (_, i) =>
          t.app.inject({ method: 'POST', url: `${prefixes[i % 3]}/auth/forgot-password/`, payload: { email: 'x@example.org' }, remoteAddress: ip })),
      );
      assert.equal(forgot.filter((r) => r.statusCode === 429).length, 4);
      // Another route keeps its own count: upload is limited per user, not by the logins above.
      const uploader = await t.tokenFor('uploader');
      const uploads = await Promise.all(
        Array.from({ length: 24 }, (_, i) => t.app.inject({ method: 'POST', url: `${prefixes[i % 3]}/upload`, headers: bearer(uploader), payload: {} })),
      );
      assert.equal(uploads.filter((r) => r.statusCode === 429).length, 4, uploads.map((r) => r.statusCode).join());
    });
  }

  it('keeps limiting, per replica, while Redis does not answer: no error for the caller', async () => {
    // Port 1: nothing listens, the connection is refused at once.
    const t = await startTestApp({ env: { RATE_LIMITS: 'on', REDIS_URL: 'redis://127.0.0.1:1' } });
    apps.push(t);
    for (let i = 0; i < 10; i++) {
      const r = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: `down${i}`, password: 'x' }, remoteAddress: '192.0.2.77' });
      assert.equal(r.statusCode, 401, r.body);
    }
    const limited = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'admin', password: t.adminPassword }, remoteAddress: '192.0.2.77' });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().code, 'rate_limited');
    // The health report says so, and the replica stays ready: Redis is not critical.
    const health = (await t.app.inject('/health')).json();
    assert.equal(health.components.redis.configured, true);
    assert.equal(health.components.redis.ok, false);
    assert.match(health.components.redis.detail, /does not answer/);
    assert.equal((await t.app.inject('/health/ready')).statusCode, 200);
  });

  it('shares counters between replicas through Redis (REDIS_URL)', async () => {
    const a = await startTestApp({ env: { RATE_LIMITS: 'on', REDIS_URL } });
    const b = await startTestApp({ env: { RATE_LIMITS: 'on', REDIS_URL } });
    apps.push(a, b);
    const ip = `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    for (let i = 0; i < 5; i++) {
      await a.app.inject({ method: 'POST', url: '/auth/token', payload: { username: `a${i}`, password: 'y' }, remoteAddress: ip });
      await b.app.inject({ method: 'POST', url: '/auth/token', payload: { username: `b${i}`, password: 'y' }, remoteAddress: ip });
    }
    const limited = await a.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'admin', password: TEST_PASSWORD }, remoteAddress: ip });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().code, 'rate_limited');
    const redis = (await a.app.inject('/health')).json().components.redis;
    assert.equal(redis.configured, true);
    assert.equal(redis.ok, true, redis.detail);
    assert.equal(typeof redis.latency_ms, 'number');
  });
});
