import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import { backends, bearer, startTestApp, TEST_PASSWORD, type TestApp } from '../helpers/app.js';

for (const backend of backends()) {
  describe(`accounts and sessions (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    before(async () => {
      t = await startTestApp({ backend });
      admin = await t.tokenFor('admin');
    });
    after(() => t.close());

    const me = (token: string) => t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) });

    it('logs in with JSON and with the OAuth2 form encoding', async () => {
      await t.tokenFor('reader', 'formuser');
      const json = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'formuser', password: TEST_PASSWORD } });
      assert.equal(json.statusCode, 200);
      assert.equal(json.json().token_type, 'bearer');
      assert.equal(json.json().expires_in, 3600);
      const form = await t.app.inject({
        method: 'POST', url: '/api/auth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `grant_type=password&username=formuser&password=${encodeURIComponent(TEST_PASSWORD)}`,
      });
      assert.equal(form.statusCode, 200, form.body);
      const body = (await me(form.json().access_token)).json();
      assert.equal(body.username, 'formuser');
      assert.equal(body.role, 'reader');
      assert.deepEqual(body.roles, ['reader']);
      assert.ok(!('password_hash' in body) && !('password' in body));
    });

    it('refuses wrong credentials with 401 and audits LOGIN with the source IP', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'admin', password: 'nope' }, remoteAddress: '10.1.2.3' });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().code, 'invalid_credentials');
      const rows = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'LOGIN').where('result', '=', 'FAILURE').execute();
      assert.ok(rows.some((r) => r.ip === '10.1.2.3' && r.username === 'admin'));
    });

    it('locks an account for 15 minutes after 5 failures (429 with Retry-After)', async () => {
      await t.tokenFor('uploader', 'victim');
      for (let i = 0; i < 5; i++) {
        const r = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'victim', password: 'wrong' } });
        assert.equal(r.statusCode, 401);
      }
      const locked = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'victim', password: TEST_PASSWORD } });
      assert.equal(locked.statusCode, 429);
      assert.equal(locked.json().code, 'account_locked');
      const retry = Number(locked.headers['retry-after']);
      assert.ok(retry > 800 && retry <= 900, `Retry-After ${retry}`);
      assert.equal(locked.json().retry_after, retry);
    });

    it('invalidates earlier JWTs when the password changes', async () => {
      const old = await t.tokenFor('uploader', 'changer');
      const res = await t.app.inject({ method: 'POST', url: '/auth/change-password', headers: bearer(old), payload: { current_password: TEST_PASSWORD, new_password: 'N3w-secret!' } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await me(old)).statusCode, 401);
      const fresh = await t.login('changer', 'N3w-secret!');
      assert.equal((await me(fresh)).statusCode, 200);
      const wrong = await t.app.inject({ method: 'POST', url: '/auth/change-password', headers: bearer(fresh), payload: { current_password: 'bad', new_password: 'N3w-secret!2' } });
      assert.equal(wrong.statusCode, 400);
    });

    it('invalidates the JWTs of a user whose password an admin resets', async () => {
      const old = await t.tokenFor('reader', 'resettee');
      const res = await t.app.inject({ method: 'POST', url: '/auth/users/resettee/reset-password', headers: bearer(admin), payload: { new_password: 'Reset-1234' } });
      assert.equal(res.statusCode, 200);
      assert.equal((await me(old)).statusCode, 401);
      await t.login('resettee', 'Reset-1234');
    });

    it('enforces the password policy with 422', async () => {
      for (const password of ['Short1!', 'alllowercase1', 'NoDigitsOrSpecial']) {
        const res = await t.app.inject({ method: 'POST', url: '/auth/users', headers: bearer(admin), payload: { username: `p${password.length}x`, password, role: 'reader' } });
        assert.equal(res.statusCode, 422, password);
        assert.equal(res.json().code, 'weak_password');
      }
    });

    it('re-reads role and active flag on every request', async () => {
      const token = await t.tokenFor('maintainer', 'flipper');
      assert.equal((await t.app.inject({ method: 'GET', url: '/audit/logs', headers: bearer(token) })).statusCode, 200);
      await t.app.inject({ method: 'PATCH', url: '/auth/users/flipper', headers: bearer(admin), payload: { role: 'reader' } });
      assert.equal((await t.app.inject({ method: 'GET', url: '/audit/logs', headers: bearer(token) })).statusCode, 403);
      await t.app.inject({ method: 'PATCH', url: '/auth/users/flipper', headers: bearer(admin), payload: { active: false } });
      const off = await me(token);
      assert.equal(off.statusCode, 401);
      assert.equal(off.json().code, 'account_disabled');
      await t.app.inject({ method: 'PATCH', url: '/auth/users/flipper', headers: bearer(admin), payload: { active: true } });
      assert.equal((await me(token)).statusCode, 200);
      const login = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'flipper', password: TEST_PASSWORD } });
      assert.equal(login.statusCode, 200);
    });

    it('keeps admins from changing their own role or deleting themselves (400)', async () => {
      const role = await t.app.inject({ method: 'PATCH', url: '/auth/users/admin', headers: bearer(admin), payload: { roles: ['reader'] } });
      assert.equal(role.statusCode, 400);
      assert.equal(role.json().code, 'self_role_change');
      const del = await t.app.inject({ method: 'DELETE', url: '/auth/users/admin', headers: bearer(admin) });
      assert.equal(del.statusCode, 400);
      assert.equal(del.json().code, 'self_delete');
    });

    it('creates users in both request forms, 409 on duplicates, 404 on unknown', async () => {
      const f1 = await t.app.inject({ method: 'POST', url: '/auth/users', headers: bearer(admin), payload: { username: 'form1', email: 'f1@example.org', password: 'Passw0rd!', roles: ['viewer'] } });
      assert.equal(f1.statusCode, 201, f1.body);
      assert.equal(f1.json().role, 'reader');
      const f2 = await t.app.inject({ method: 'POST', url: '/auth/users', headers: bearer(admin), payload: { username: 'form2', password: 'Passw0rd!', role: 'auditor', full_name: 'Form Two', email: 'f2@example.org' } });
      assert.equal(f2.statusCode, 201);
      assert.equal(f2.json().full_name, 'Form Two');
      const dup = await t.app.inject({ method: 'POST', url: '/auth/users', headers: bearer(admin), payload: { username: 'form2', password: 'Passw0rd!', role: 'auditor' } });
      assert.equal(dup.statusCode, 409);
      assert.equal((await t.app.inject({ method: 'GET', url: '/auth/users/ghost', headers: bearer(admin) })).statusCode, 404);
      const list = (await t.app.inject({ method: 'GET', url: '/auth/users', headers: bearer(admin) })).json() as Array<Record<string, unknown>>;
      assert.ok(list.some((u) => u.username === 'form1'));
      assert.ok(list.every((u) => !('password_hash' in u)));
      const del = await t.app.inject({ method: 'DELETE', url: '/auth/users/form1', headers: bearer(admin) });
      assert.equal(del.statusCode, 204);
      const audit = await t.ctx.db.selectFrom('audit_index').select('action').execute();
      for (const action of ['USER_CREATE', 'USER_DELETE', 'USER_ROLE_CHANGE', 'USER_UPDATE', 'PASSWORD_CHANGE', 'PASSWORD_RESET', 'LOGIN']) {
        assert.ok(audit.some((a) => a.action === action), action);
      }
    });

    it('answers forgot-password with the same 202 for known and unknown addresses', async () => {
      const known = await t.app.inject({ method: 'POST', url: '/auth/forgot-password', payload: { email: 'f2@example.org' } });
      const unknown = await t.app.inject({ method: 'POST', url: '/auth/forgot-password', payload: { email: 'nobody@example.org' } });
      assert.equal(known.statusCode, 202);
      assert.equal(unknown.statusCode, 202);
      assert.equal(known.body, unknown.body);
      const bad = await t.app.inject({ method: 'POST', url: '/auth/reset-password', payload: { token: 'x'.repeat(43), new_password: 'Whatever-1' } });
      assert.equal(bad.statusCode, 400);
    });

    it('requires a TOTP code at login once MFA is enabled', async () => {
      const token = await t.tokenFor('uploader', 'mfauser');
      const setup = await t.app.inject({ method: 'POST', url: '/auth/mfa/setup', headers: bearer(token), payload: { password: TEST_PASSWORD } });
      assert.equal(setup.statusCode, 200);
      const { secret, otpauth_url } = setup.json();
      assert.match(otpauth_url, /^otpauth:\/\/totp\//);
      const badEnable = await t.app.inject({ method: 'POST', url: '/auth/mfa/enable', headers: bearer(token), payload: { code: '000000' } });
      assert.equal(badEnable.statusCode, 400);
      const enable = await t.app.inject({ method: 'POST', url: '/auth/mfa/enable', headers: bearer(token), payload: { code: await generate({ secret }) } });
      assert.equal(enable.statusCode, 200, enable.body);
      const first = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'mfauser', password: TEST_PASSWORD } });
      assert.equal(first.statusCode, 200);
      assert.equal(first.json().mfa_required, true);
      assert.equal(first.json().access_token, '');
      const wrong = await t.app.inject({ method: 'POST', url: '/auth/mfa/verify', payload: { mfa_token: first.json().mfa_token, code: '123456' } });
      assert.equal(wrong.statusCode, 401);
      const second = await t.app.inject({ method: 'POST', url: '/auth/mfa/verify', payload: { mfa_token: first.json().mfa_token, code: await generate({ secret }) } });
      assert.equal(second.statusCode, 200, second.body);
      assert.ok(second.json().access_token.length > 20);
      const direct = await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'mfauser', password: TEST_PASSWORD, otp: await generate({ secret }) } });
      assert.ok(direct.json().access_token.length > 20);
    });
  });
}
