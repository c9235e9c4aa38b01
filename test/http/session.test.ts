import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, TEST_PASSWORD, type TestApp } from '../helpers/app.js';

/** The `name=value` part of a Set-Cookie header, and its attributes in lower case. */
function parseSetCookie(header: string | string[] | number | undefined) {
  const raw = Array.isArray(header) ? header[0]! : String(header);
  const [pair, ...attributes] = raw.split(';').map((s) => s.trim());
  return { pair: pair!, attributes: attributes.map((a) => a.toLowerCase()) };
}

for (const backend of backends()) {
  describe(`browser session cookie (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ backend });
      await t.tokenFor('uploader', 'browser');
    });
    after(() => t.close());

    const logIn = async (username = 'browser', password = TEST_PASSWORD) => {
      const res = await t.app.inject({ method: 'POST', url: '/auth/session', payload: { username, password }, remoteAddress: '10.9.8.7' });
      assert.equal(res.statusCode, 200, res.body);
      const cookie = parseSetCookie(res.headers['set-cookie']);
      return { res, cookie: cookie.pair, attributes: cookie.attributes, csrf: res.json().csrf_token as string };
    };

    it('logs in into an httpOnly SameSite=Strict cookie, with no token in the body, and audits LOGIN', async () => {
      const { res, cookie, attributes, csrf } = await logIn();
      assert.match(cookie, /^tollgate_session=[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.ok(attributes.includes('httponly'));
      assert.ok(attributes.includes('samesite=strict'));
      assert.ok(attributes.includes('path=/'));
      assert.ok(attributes.includes('max-age=3600'));
      assert.ok(!attributes.includes('secure'), 'plain http: no Secure flag, or the browser would drop it');
      const body = res.json();
      assert.equal(body.mfa_required, false);
      assert.equal(body.user.username, 'browser');
      assert.equal(body.user.role, 'uploader');
      assert.ok(csrf.length >= 40);
      assert.ok(!res.body.includes(cookie.split('=')[1]!), 'the JWT is not in the body');
      const rows = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'LOGIN').where('username', '=', 'browser').execute();
      assert.ok(rows.some((r) => r.ip === '10.9.8.7' && r.result === 'SUCCESS' && /browser session/.test(r.detail ?? '')));
    });

    it('survives a reload: the cookie alone authenticates reads and GET /auth/session gives the CSRF token again', async () => {
      const { cookie, csrf } = await logIn();
      const me = await t.app.inject({ method: 'GET', url: '/auth/me', headers: { cookie } });
      assert.equal(me.statusCode, 200);
      assert.equal(me.json().username, 'browser');
      const session = await t.app.inject({ method: 'GET', url: '/api/v1/auth/session', headers: { cookie: `other=1; ${cookie}` } });
      assert.equal(session.statusCode, 200);
      assert.equal(session.json().csrf_token, csrf);
      assert.equal(session.json().user.username, 'browser');
      assert.equal(session.json().role, 'uploader');
      assert.equal(session.json().can_decide, false);
      const none = await t.app.inject({ method: 'GET', url: '/auth/session' });
      assert.equal(none.statusCode, 401);
    });

    it('refuses a change the cookie authenticates without the session CSRF token (403), accepts it with', async () => {
      const { cookie, csrf } = await logIn();
      const create = (headers: Record<string, string>) =>
        t.app.inject({ method: 'POST', url: '/auth/api-tokens', headers, payload: { name: `ci-${Math.random()}`, role: 'uploader' } });
      const missing = await create({ cookie });
      assert.equal(missing.statusCode, 403);
      assert.equal(missing.json().code, 'csrf_token_invalid');
      const other = await logIn();
      assert.notEqual(other.csrf, csrf);
      const wrong = await create({ cookie, 'x-csrf-token': other.csrf });
      assert.equal(wrong.statusCode, 403, 'a token of another session does not fit');
      const right = await create({ cookie, 'x-csrf-token': csrf });
      assert.equal(right.statusCode, 201, right.body);
      const tokens = await t.ctx.db.selectFrom('api_tokens').select('name').execute();
      assert.equal(tokens.filter((r) => r.name.startsWith('ci-')).length, 1, 'the refused requests created nothing');
    });

    it('leaves the bearer API unchanged: a Bearer header needs no CSRF token and wins over a cookie', async () => {
      const token = await t.login('browser', TEST_PASSWORD);
      const res = await t.app.inject({ method: 'POST', url: '/auth/api-tokens', headers: { ...bearer(token), cookie: 'tollgate_session=garbage.garbage.garbage' }, payload: { name: 'bearer-made', role: 'uploader' } });
      assert.equal(res.statusCode, 201, res.body);
      const tokenLogin = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'browser', password: TEST_PASSWORD } });
      assert.equal(tokenLogin.headers['set-cookie'], undefined);
      assert.ok(tokenLogin.json().access_token);
    });

    it('accepts only a login JWT in the cookie, not an API token', async () => {
      const token = await t.login('browser', TEST_PASSWORD);
      const made = await t.app.inject({ method: 'POST', url: '/auth/api-tokens', headers: bearer(token), payload: { name: 'in-a-cookie', role: 'uploader' } });
      const raw = made.json().token as string;
      const res = await t.app.inject({ method: 'GET', url: '/auth/me', headers: { cookie: `tollgate_session=${raw}` } });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().code, 'invalid_token');
    });

    it('refuses a wrong password with 401 and sets no cookie', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/auth/session', payload: { username: 'browser', password: 'wrong' } });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().code, 'invalid_credentials');
      assert.equal(res.headers['set-cookie'], undefined);
    });

    it('logs out: the cookie is cleared and LOGOUT audited', async () => {
      const { cookie } = await logIn();
      const res = await t.app.inject({ method: 'DELETE', url: '/auth/session', headers: { cookie } });
      assert.equal(res.statusCode, 200);
      const cleared = parseSetCookie(res.headers['set-cookie']);
      assert.equal(cleared.pair, 'tollgate_session=');
      assert.ok(cleared.attributes.includes('max-age=0'));
      const rows = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'LOGOUT').execute();
      assert.ok(rows.some((r) => r.username === 'browser'));
      const anonymous = await t.app.inject({ method: 'DELETE', url: '/auth/session' });
      assert.equal(anonymous.statusCode, 200, 'leaving without a session is not an error');
    });
  });
}

describe('browser session behind HTTPS', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { APP_URL: 'https://repo.example.org' } });
  });
  after(() => t.close());

  it('marks the cookie Secure', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/auth/session', payload: { username: 'admin', password: t.adminPassword } });
    assert.equal(res.statusCode, 200);
    assert.ok(parseSetCookie(res.headers['set-cookie']).attributes.includes('secure'));
  });

  it('tells the interface whether the session may decide on reviews, following decide_min_role', async () => {
    const sessionOf = async (username: string, password: string) => {
      const login = await t.app.inject({ method: 'POST', url: '/auth/session', payload: { username, password } });
      const cookie = parseSetCookie(login.headers['set-cookie']).pair;
      return (await t.app.inject({ method: 'GET', url: '/auth/session', headers: { cookie } })).json() as { role: string; can_decide: boolean };
    };
    await t.tokenFor('maintainer', 'keeper');
    assert.deepEqual(await sessionOf('admin', t.adminPassword).then((s) => [s.role, s.can_decide]), ['admin', true]);
    assert.deepEqual(await sessionOf('keeper', TEST_PASSWORD).then((s) => [s.role, s.can_decide]), ['maintainer', false]);
    await t.ctx.settings.update({ decide_min_role: 'maintainer' }, 'admin');
    assert.equal((await sessionOf('keeper', TEST_PASSWORD)).can_decide, true);
  });
});
