import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { ROLES, type Role } from '../../src/domain/roles.js';
import { ROUTE_ACCESS } from '../../src/http/permissions.js';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';

/** A concrete URL for a route template: every parameter gets a harmless value. */
const concrete = (template: string) => template.replace(/:[a-z_]+/g, 'nobody').replace(/\*$/, 'x');

describe('permission table walk: every route x five roles, anonymous, deactivated, expired', () => {
  let t: TestApp;
  const tokens = {} as Record<Role, string>;
  let deactivated: string;
  let expired: string;

  before(async () => {
    t = await startTestApp();
    for (const role of ROLES) tokens[role] = await t.tokenFor(role);
    await t.ctx.users.create({ username: 'gone', password: 'Passw0rd!', role: 'admin' });
    deactivated = await t.login('gone', 'Passw0rd!');
    const gone = (await t.ctx.users.byUsername('gone'))!;
    await t.ctx.users.update(gone, { active: false });
    const admin = (await t.ctx.users.byUsername('admin'))!;
    expired = await new SignJWT({ ver: admin.token_version, typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(admin.id)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(t.config.jwtSecret));
  });
  after(() => t.close());

  it('registers every route through the table, and the table names no route that does not exist', () => {
    const registered = new Set(t.routes.map((r) => `${r.method} ${r.template}`));
    for (const r of t.routes) assert.ok(ROUTE_ACCESS[`${r.method} ${r.template}`] !== undefined, `${r.method} ${r.template}`);
    const missing = Object.keys(ROUTE_ACCESS).filter((k) => !registered.has(k));
    assert.deepEqual(missing, [], 'table entries without a route');
  });

  it('answers 401/403/allowed exactly as the table says', async () => {
    const apiRoutes = t.routes.filter((r) => !r.template.startsWith('/docs') && r.template !== '/openapi.json' && r.method !== 'OPTIONS');
    const seen = new Set<string>();
    let checked = 0;
    for (const route of apiRoutes) {
      const key = `${route.method} ${route.template}`;
      if (seen.has(key)) continue;
      seen.add(key);
      for (const prefix of ['', '/api/v1']) {
        const url = prefix + concrete(route.template);
        const call = (headers: Record<string, string> = {}) =>
          t.app.inject({ method: route.method as 'GET', url, headers: { ...headers, 'content-type': 'application/json' }, payload: route.method === 'GET' || route.method === 'DELETE' ? undefined : '{}' });
        const anon = await call();
        if (route.access === 'public') {
          assert.ok(![401, 403].includes(anon.statusCode) && anon.statusCode < 500, `${key} public but anonymous got ${anon.statusCode}`);
          continue;
        }
        assert.equal(anon.statusCode, 401, `${key} anonymous`);
        assert.equal(anon.headers['www-authenticate'], 'Bearer');
        assert.equal((await call(bearer(deactivated))).statusCode, 401, `${key} deactivated`);
        assert.equal((await call(bearer(expired))).statusCode, 401, `${key} expired JWT`);
        for (const role of ROLES) {
          const res = await call(bearer(tokens[role]));
          const allowed = route.access === 'any' || (route.access === 'decider' ? role === 'admin' : (route.access as readonly Role[]).includes(role));
          // Allowed means answered: a crash (500) is not a pass. 503 is a dependency that is not
          // configured here (clamd, feeds), answered with its error body.
          if (allowed) assert.ok(![401, 403].includes(res.statusCode) && (res.statusCode < 500 || res.statusCode === 503), `${key} ${role} should be allowed, got ${res.statusCode} ${res.body}`);
          else assert.equal(res.statusCode, 403, `${key} ${role} should be forbidden, got ${res.statusCode}`);
          checked++;
        }
      }
    }
    assert.ok(checked > 100, `walked ${checked} route/role pairs`);
  });
});
