import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';

for (const backend of backends()) {
  describe(`API tokens (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    before(async () => {
      t = await startTestApp({ backend });
      admin = await t.tokenFor('admin');
    });
    after(() => t.close());

    const create = (token: string, payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/auth/api-tokens', headers: bearer(token), payload });

    it('shows the raw token once, stores only its SHA-256, and authenticates with it', async () => {
      const res = await create(admin, { name: 'ci', role: 'uploader', expires_days: 30 });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.match(body.token, /^tg_[A-Za-z0-9_-]{43}$/);
      assert.equal(body.prefix, 'tg_');
      assert.deepEqual(body.roles, ['uploader']);
      assert.ok(body.expires_at);
      const stored = await t.ctx.db.selectFrom('api_tokens').selectAll().where('id', '=', body.token_id).executeTakeFirstOrThrow();
      assert.notEqual(stored.token_hash, body.token);
      assert.match(stored.token_hash, /^[0-9a-f]{64}$/);
      const list = await t.app.inject({ method: 'GET', url: '/auth/api-tokens', headers: bearer(admin) });
      assert.ok(!list.body.includes(body.token));
      const me = await t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(body.token) });
      assert.equal(me.statusCode, 200);
      // the token's role applies, not the creator's: an uploader token cannot manage users
      assert.equal((await t.app.inject({ method: 'GET', url: '/auth/users', headers: bearer(body.token) })).statusCode, 403);
    });

    it('refuses a token role above the creator (uploader cannot mint an auditor or admin token)', async () => {
      const uploader = await t.tokenFor('uploader', 'tokuser');
      assert.equal((await create(uploader, { name: 'x', role: 'admin' })).statusCode, 403);
      assert.equal((await create(uploader, { name: 'x', roles: ['auditor'] })).statusCode, 403);
      const ok = await create(uploader, { name: 'mine', roles: ['viewer'] });
      assert.equal(ok.statusCode, 201);
      assert.equal(ok.json().role, 'reader');
      // readers and auditors cannot create tokens at all
      assert.equal((await create(await t.tokenFor('auditor'), { name: 'x' })).statusCode, 403);
    });

    it('lets uploaders see and revoke only their own tokens; admins manage all', async () => {
      const alice = await t.tokenFor('uploader', 'alice');
      const bob = await t.tokenFor('uploader', 'bob');
      const a = (await create(alice, { name: 'alice-ci' })).json();
      const b = (await create(bob, { name: 'bob-ci' })).json();
      const aliceList = (await t.app.inject({ method: 'GET', url: '/auth/api-tokens', headers: bearer(alice) })).json() as Array<{ token_id: string }>;
      assert.deepEqual(aliceList.map((x) => x.token_id), [a.token_id]);
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/auth/api-tokens/${b.token_id}`, headers: bearer(alice) })).statusCode, 404);
      const all = (await t.app.inject({ method: 'GET', url: '/auth/api-tokens', headers: bearer(admin) })).json() as Array<{ token_id: string }>;
      assert.ok(all.some((x) => x.token_id === b.token_id));
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/auth/api-tokens/${b.token_id}`, headers: bearer(admin) })).statusCode, 204);
    });

    it('revocation applies to the very next request', async () => {
      const { token, token_id } = (await create(admin, { name: 'short-lived', role: 'reader' })).json();
      assert.equal((await t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/auth/api-tokens/${token_id}`, headers: bearer(admin) })).statusCode, 204);
      assert.equal((await t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) })).statusCode, 401);
    });

    it("limits a token by its creator's current role and active flag", async () => {
      const maint = await t.tokenFor('maintainer', 'carol');
      const { token } = (await create(maint, { name: 'carol-ci', role: 'maintainer' })).json();
      assert.equal((await t.app.inject({ method: 'GET', url: '/audit/logs', headers: bearer(token) })).statusCode, 200);
      await t.app.inject({ method: 'PATCH', url: '/auth/users/carol', headers: bearer(admin), payload: { role: 'uploader' } });
      assert.equal((await t.app.inject({ method: 'GET', url: '/audit/logs', headers: bearer(token) })).statusCode, 403);
      await t.app.inject({ method: 'PATCH', url: '/auth/users/carol', headers: bearer(admin), payload: { active: false } });
      assert.equal((await t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) })).statusCode, 401);
    });

    it('refuses expired tokens and near-miss token strings', async () => {
      const { token, token_id } = (await create(admin, { name: 'old', role: 'reader', expires_days: 1 })).json();
      await t.ctx.db.updateTable('api_tokens').set({ expires_at: '2000-01-01T00:00:00+00:00' }).where('id', '=', token_id).execute();
      assert.equal((await t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) })).statusCode, 401);
      const fresh = (await create(admin, { name: 'new', role: 'reader' })).json().token as string;
      const tampered = fresh.slice(0, -1) + (fresh.endsWith('A') ? 'B' : 'A');
      assert.equal((await t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(tampered) })).statusCode, 401);
    });
  });
}
