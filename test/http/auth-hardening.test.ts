import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { generate } from 'otplib';
import { backends, bearer, startTestApp, TEST_PASSWORD, type TestApp } from '../helpers/app.js';

/** Issue 17: the ways around the login checks that an attacker on the network found. */

const login = (t: TestApp, username: string, password: string) =>
  t.app.inject({ method: 'POST', url: '/auth/token', payload: { username, password } });

for (const backend of backends()) {
  describe(`authentication hardening (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    before(async () => {
      t = await startTestApp({ backend, env: { EDITION: 'enterprise' } });
      admin = await t.tokenFor('admin');
    });
    after(() => t.close());

    const me = (token: string) => t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) });
    const createUser = (username: string) =>
      t.app.inject({ method: 'POST', url: '/auth/users', headers: bearer(admin), payload: { username, password: TEST_PASSWORD, role: 'reader' } });

    it('keeps user names unique without regard to case and finds them in any case', async () => {
      assert.equal((await createUser('CaseUser')).statusCode, 201);
      for (const clash of ['caseuser', 'CASEUSER']) {
        const dup = await createUser(clash);
        assert.equal(dup.statusCode, 409, clash);
        assert.equal(dup.json().code, 'user_exists');
      }
      const shown = await t.app.inject({ method: 'GET', url: '/auth/users/CASEUSER', headers: bearer(admin) });
      assert.equal(shown.statusCode, 200);
      assert.equal(shown.json().username, 'CaseUser');
      const session = await t.login('caseuser', TEST_PASSWORD);
      assert.equal((await me(session)).json().username, 'CaseUser');
    });

    it('counts failures toward one lockout whatever the case of the name', async () => {
      await createUser('Mallory');
      for (const name of ['mallory', 'MALLORY', 'Mallory', 'mAllory', 'malLORY']) {
        assert.equal((await login(t, name, 'wrong-password')).statusCode, 401, name);
      }
      for (const name of ['Mallory', 'mallory', 'MALLORY']) {
        const locked = await login(t, name, TEST_PASSWORD);
        assert.equal(locked.statusCode, 429, name);
        assert.equal(locked.json().code, 'account_locked');
      }
    });

    it('refuses a JWT without exp or iat even when it is signed with the real key', async () => {
      const user = (await t.ctx.users.byUsername('admin'))!;
      const key = new TextEncoder().encode(t.config.jwtSecret);
      const noExp = await new SignJWT({ ver: user.token_version, typ: 'access' }).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuedAt().sign(key);
      const noIat = await new SignJWT({ ver: user.token_version, typ: 'access' }).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setExpirationTime('5m').sign(key);
      const both = await new SignJWT({ ver: user.token_version, typ: 'access' }).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuedAt().setExpirationTime('5m').sign(key);
      assert.equal((await me(both)).statusCode, 200, 'the control token is accepted');
      for (const [name, token] of [['no exp', noExp], ['no iat', noIat]] as const) {
        const res = await me(token);
        assert.equal(res.statusCode, 401, name);
        assert.equal(res.json().code, 'invalid_token');
      }
    });

    it('locks the account after 5 wrong current passwords on change-password', async () => {
      const session = await t.tokenFor('uploader', 'guesser');
      const change = (current: string) =>
        t.app.inject({ method: 'POST', url: '/auth/change-password', headers: bearer(session), payload: { current_password: current, new_password: 'N3w-secret!x' } });
      for (let i = 0; i < 5; i++) {
        const wrong = await change(`guess-${i}`);
        assert.equal(wrong.statusCode, 400);
        assert.equal(wrong.json().code, 'invalid_current_password');
      }
      const locked = await login(t, 'guesser', TEST_PASSWORD);
      assert.equal(locked.statusCode, 429);
      assert.equal(locked.json().code, 'account_locked');
      assert.ok(Number(locked.headers['retry-after']) > 800);
      // The right password no longer helps either while the lock lasts.
      const blocked = await change(TEST_PASSWORD);
      assert.equal(blocked.statusCode, 429);
      assert.equal(blocked.json().code, 'account_locked');
      assert.ok(Number(blocked.headers['retry-after']) > 800);
    });

    it('keeps MFA changes to interactive sessions proven by the password or a current code', async () => {
      const session = await t.tokenFor('uploader', 'mfaowner');
      const created = await t.app.inject({ method: 'POST', url: '/auth/api-tokens', headers: bearer(session), payload: { name: 'ci', role: 'reader' } });
      assert.equal(created.statusCode, 201, created.body);
      const apiToken = created.json().token as string;
      const call = (path: string, token: string, payload: Record<string, unknown>) =>
        t.app.inject({ method: 'POST', url: `/auth/mfa/${path}`, headers: bearer(token), payload });

      for (const [path, payload] of [['setup', { password: TEST_PASSWORD }], ['enable', { code: '123456' }], ['disable', { code: '123456' }]] as const) {
        const res = await call(path, apiToken, payload);
        assert.equal(res.statusCode, 403, `${path} with an API token`);
        assert.equal(res.json().code, 'interactive_session_required');
      }
      assert.equal((await t.ctx.users.byUsername('mfaowner'))?.mfa_secret, null, 'no secret was stored');

      const missing = await call('setup', session, {});
      assert.equal(missing.statusCode, 422);
      const wrong = await call('setup', session, { password: 'not-my-password' });
      assert.equal(wrong.statusCode, 400);
      assert.equal(wrong.json().code, 'invalid_current_password');
      const setup = await call('setup', session, { current_password: TEST_PASSWORD });
      assert.equal(setup.statusCode, 200, setup.body);
      const { secret } = setup.json() as { secret: string };
      assert.equal((await call('enable', session, { code: await generate({ secret }) })).statusCode, 200);

      // Logged in again with the second factor: disabling needs a current code, and an API token still cannot.
      const first = (await login(t, 'mfaowner', TEST_PASSWORD)).json();
      const second = await t.app.inject({ method: 'POST', url: '/auth/mfa/verify', payload: { mfa_token: first.mfa_token, code: await generate({ secret }) } });
      const mfaSession = second.json().access_token as string;
      assert.equal((await call('disable', apiToken, { code: await generate({ secret }) })).statusCode, 403);
      const badCode = await call('disable', mfaSession, { code: '000000' });
      assert.equal(badCode.statusCode, 400);
      assert.equal(badCode.json().code, 'invalid_code');
      assert.equal((await call('disable', mfaSession, { code: await generate({ secret }) })).statusCode, 200);
      assert.equal((await t.ctx.users.byUsername('mfaowner'))?.mfa_enabled, 0);
      const audit = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'MFA_CHANGE').where('username', '=', 'mfaowner').execute();
      assert.ok(audit.some((a) => a.result === 'FAILURE'), 'wrong proofs are audited');
      assert.ok(audit.some((a) => a.result === 'SUCCESS' && a.detail === 'disabled'));
    });
  });
}

describe('change-password rate limit', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { RATE_LIMITS: 'on' } });
  });
  after(() => t.close());

  it('answers the 11th change-password of one user in a minute with 429, other users unaffected', async () => {
    const session = await t.tokenFor('reader', 'hasty');
    // The right current password with a new one the policy refuses: no lockout failure is counted.
    const attempt = (token: string, prefix = '') =>
      t.app.inject({ method: 'POST', url: `${prefix}/auth/change-password`, headers: bearer(token), payload: { current_password: TEST_PASSWORD, new_password: 'weak' } });
    // One counter for the route, whichever prefix serves it.
    const prefixes = ['', '/api', '/api/v1'];
    for (let i = 0; i < 10; i++) assert.equal((await attempt(session, prefixes[i % 3])).statusCode, 422, `attempt ${i}`);
    const limited = await attempt(session, '/api/v1');
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().code, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal((await attempt(await t.tokenFor('reader', 'patient'))).statusCode, 422);
  });
});

describe('login timing does not tell which accounts exist', () => {
  let t: TestApp;
  before(async () => {
    // Cost 8: a bcrypt comparison (~20 ms) stands well clear of the rest of a login (~1-3 ms).
    t = await startTestApp({ env: { BCRYPT_ROUNDS: '8' } });
    for (let i = 0; i < 5; i++) await t.ctx.users.create({ username: `timed${i}`, password: TEST_PASSWORD, role: 'reader' });
    await t.ctx.users.create({ username: 'retired', password: TEST_PASSWORD, role: 'reader' });
    await t.ctx.users.update((await t.ctx.users.byUsername('retired'))!, { active: false });
  });
  after(() => t.close());

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  async function timed(username: string): Promise<number> {
    const start = process.hrtime.bigint();
    const res = await login(t, username, 'Wrong-passw0rd');
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    assert.equal(res.statusCode, 401, username);
    return ms;
  }

  it('takes about as long for an unknown or deactivated user as for a wrong password', async () => {
    await timed('warm-up');
    const existing: number[] = [];
    const unknown: number[] = [];
    const deactivated: number[] = [];
    // Interleaved, so a slow moment of the machine affects every kind alike; one failure per
    // existing account keeps the lockout out of the measurement.
    for (let i = 0; i < 5; i++) {
      existing.push(await timed(`timed${i}`));
      unknown.push(await timed(`ghost${i}`));
      if (i < 4) deactivated.push(await timed('retired'));
    }
    const known = median(existing);
    for (const [kind, values] of [['unknown', unknown], ['deactivated', deactivated]] as const) {
      const ratio = known / median(values);
      assert.ok(ratio > 1 / 3 && ratio < 3, `wrong password ${known.toFixed(1)} ms vs ${kind} ${median(values).toFixed(1)} ms`);
    }
  });
});
