import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { assertErrorBody } from '../helpers/errors.js';

const NASTY = ["'", "' OR '1'='1", '"; DROP TABLE users; --', '%', '_', '\\', '../../etc/passwd', '\u0000', 'a'.repeat(300), '${jndi:x}', '<script>'];

for (const backend of backends()) {
  describe(`bad input never yields a 500 (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    before(async () => {
      t = await startTestApp({ backend });
      admin = await t.tokenFor('admin');
    });
    after(() => t.close());

    const assertClientError = (res: { statusCode: number; body: string }, what: string) => {
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${what}: ${res.statusCode} ${res.body}`);
      const body = JSON.parse(res.body) as { detail: unknown; code: unknown };
      assert.equal(typeof body.detail, 'string', what);
      assert.match(String(body.code), /^[a-z_]+$/, what);
    };

    it('answers malformed JSON with 400', async () => {
      for (const payload of ['{bad', '[1,', '"unterminated', '{"a":}']) {
        const res = await t.app.inject({ method: 'POST', url: '/auth/users', headers: { ...bearer(admin), 'content-type': 'application/json' }, payload });
        assert.equal(res.statusCode, 400, payload);
        assert.equal(res.json().code, 'malformed_json');
      }
    });

    it('answers wrong types and unknown fields in strict bodies with 422 and field locations', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/auth/users', headers: bearer(admin), payload: { username: 'x1', password: 12345678, role: 'reader' } });
      assert.equal(res.statusCode, 422);
      assert.deepEqual(res.json().errors[0].loc, ['body', 'password']);
      const unknown = await t.app.inject({ method: 'PATCH', url: '/auth/users/admin', headers: bearer(admin), payload: { is_admin: true } });
      assert.equal(unknown.statusCode, 422);
      const badEnum = await t.app.inject({ method: 'POST', url: '/auth/users', headers: bearer(admin), payload: { username: 'x2', password: 'Passw0rd!', role: 'emperor' } });
      assert.equal(badEnum.statusCode, 422);
      const badQuery = await t.app.inject({ method: 'GET', url: '/audit/logs?page=zero&per_page=5000', headers: bearer(admin) });
      assert.equal(badQuery.statusCode, 422);
    });

    it('matches enumerated query values without regard to case, and still refuses values outside the enumeration', async () => {
      await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'admin', password: 'wrong' } });
      const lower = await t.app.inject({ method: 'GET', url: '/audit/logs?result=failure&action=LOGIN', headers: bearer(admin) });
      assert.equal(lower.statusCode, 200, lower.body);
      assert.ok(lower.json().items.length >= 1);
      assert.ok(lower.json().items.every((e: { result: string }) => e.result === 'FAILURE'));
      const mixed = await t.app.inject({ method: 'GET', url: '/audit/logs?result=Failure', headers: bearer(admin) });
      assert.equal(mixed.json().total, lower.json().total);
      const wrong = await t.app.inject({ method: 'GET', url: '/audit/logs?result=failed', headers: bearer(admin) });
      assert.equal(wrong.statusCode, 422);
    });

    it('answers oversized bodies with 413', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/auth/users', headers: { ...bearer(admin), 'content-type': 'application/json' }, payload: JSON.stringify({ username: 'big', password: 'x'.repeat(2 * 1024 * 1024) }) });
      assert.equal(res.statusCode, 413);
      assert.equal(res.json().code, 'body_too_large');
    });

    it('treats SQL and path metacharacters in every string parameter as plain data', async () => {
      for (const value of NASTY) {
        const enc = encodeURIComponent(value);
        const calls = [
          t.app.inject({ method: 'GET', url: `/audit/logs?q=${enc}&package=${enc}&action=${enc}&user=${enc}`, headers: bearer(admin) }),
          t.app.inject({ method: 'GET', url: `/audit/package/${enc}`, headers: bearer(admin) }),
          t.app.inject({ method: 'GET', url: `/auth/users/${enc}`, headers: bearer(admin) }),
          t.app.inject({ method: 'DELETE', url: `/auth/api-tokens/${enc}`, headers: bearer(admin) }),
          t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: value, password: value } }),
          t.app.inject({ method: 'POST', url: '/auth/forgot-password', payload: { email: value } }),
        ];
        for (const res of await Promise.all(calls)) {
          assert.ok(res.statusCode < 500, `${value}: ${res.statusCode} ${res.body}`);
          if (res.statusCode >= 400) assertClientError(res, value);
        }
      }
      const users = await t.ctx.users.list();
      assert.ok(users.some((u) => u.username === 'admin'), 'users table intact');
      // the injection text is searched for literally: only entries that contain it match
      const needle = "' OR '1'='1";
      const search = (await t.app.inject({ method: 'GET', url: `/audit/logs?q=${encodeURIComponent(needle)}&per_page=1000`, headers: bearer(admin) })).json();
      const all = (await t.app.inject({ method: 'GET', url: '/audit/logs?per_page=1000', headers: bearer(admin) })).json();
      assert.ok(search.total >= 1 && search.total < all.total, `${search.total} of ${all.total}`);
      for (const e of search.items as Array<{ user: string | null; package: string | null; detail: string | null }>) {
        assert.ok([e.user, e.package, e.detail].some((f) => f?.toLowerCase().includes(needle.toLowerCase())));
      }
      const nul = await t.app.inject({ method: 'GET', url: '/audit/logs?q=a%00b', headers: bearer(admin) });
      assert.equal(nul.statusCode, 400);
      assert.equal(nul.json().code, 'invalid_characters');
    });

    it('never leaks a stack trace and answers unknown routes with the error body', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/no/such/route' });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().code, 'not_found');
      assert.ok(!res.body.includes('at '));
    });
  });
}

describe('errors raised before routing, over a real socket', () => {
  /** Sends raw bytes and returns the status line and the body of the answer. */
  const rawExchange = (port: number, request: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(request));
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const [head = '', body = ''] = text.split('\r\n\r\n');
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body });
      });
    });

  it('answers oversized headers (431), a malformed request (400) and bad percent-encoding (400) with the error body', async (t) => {
    const app = await startTestApp();
    t.after(() => app.close());
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.app.server.address() as AddressInfo).port;
    const huge = await rawExchange(port, `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    assert.equal(huge.status, 431);
    assert.equal(assertErrorBody(431, huge.body).code, 'headers_too_large');
    const garbage = await rawExchange(port, 'NOT A REQUEST\r\n\r\n');
    assert.equal(garbage.status, 400);
    assert.equal(assertErrorBody(400, garbage.body).code, 'malformed_request');
    const badUrl = await rawExchange(port, 'GET /auth/users/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(badUrl.status, 400);
    assert.equal(assertErrorBody(400, badUrl.body).code, 'invalid_path');
  });
});
