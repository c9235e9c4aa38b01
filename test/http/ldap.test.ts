import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Attribute, Change, Client } from 'ldapts';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { startSlapd, type RunningSlapd } from '../helpers/slapd.js';

/** LDAP login through POST /auth/token against a real slapd (DECISIONS §10: Enterprise only). */

let slapd: RunningSlapd;

before(async () => {
  slapd = await startSlapd({
    users: [
      { uid: 'svc', password: 'svc-pw' },
      { uid: 'alice', password: 'alice-pw', cn: 'Alice Liddell', mail: 'alice@example.org' },
      { uid: 'bob', password: 'bob-pw' },
      { uid: 'carol', password: 'carol-pw' },
      { uid: 'dora', password: 'dora-pw' },
      { uid: 'erin', password: 'erin-pw' },
    ],
    groups: [
      { cn: 'devs', members: ['alice', 'carol', 'erin'] },
      { cn: 'leads', members: [] },
      { cn: 'readers', members: ['dora'], kind: 'posixGroup' },
      { cn: 'unmapped', members: ['bob'] },
    ],
  });
});
after(async () => {
  await slapd?.stop();
});

function ldapSettings(): Record<string, unknown> {
  return {
    ldap_enabled: true,
    ldap_url: slapd.url,
    ldap_base_dn: slapd.baseDn,
    ldap_bind_dn: slapd.userDn('svc'),
    ldap_bind_password: 'svc-pw',
    group_admin: slapd.groupDn('leads'),
    group_maintainer: 'devs',
    group_reader: 'readers',
  };
}

async function patchSettings(t: TestApp, admin: string, patch: Record<string, unknown>): Promise<void> {
  const res = await t.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload: patch });
  assert.equal(res.statusCode, 200, res.body);
}

/** Adds or removes a groupOfNames member as the directory's root account: a real group change. */
async function changeGroup(operation: 'add' | 'delete', group: string, uid: string): Promise<void> {
  const client = new Client({ url: slapd.url });
  try {
    await client.bind(slapd.rootDn, slapd.rootPassword);
    await client.modify(slapd.groupDn(group), new Change({ operation, modification: new Attribute({ type: 'member', values: [slapd.userDn(uid)] }) }));
  } finally {
    await client.unbind();
  }
}

const tokenRequest = (t: TestApp, username: string, password: string) =>
  t.app.inject({ method: 'POST', url: '/auth/token', payload: { username, password } });

for (const backend of backends()) {
  describe(`LDAP login (${backend}, enterprise)`, () => {
    let t: TestApp;
    let admin: string;
    before(async () => {
      t = await startTestApp({ backend, env: { EDITION: 'enterprise' } });
      admin = await t.tokenFor('admin');
      await patchSettings(t, admin, ldapSettings());
    });
    after(() => t.close());

    it('logs a mapped directory user in and stores a local record with source ldap and no password', async () => {
      const res = await tokenRequest(t, 'alice', 'alice-pw');
      assert.equal(res.statusCode, 200, res.body);
      const me = await t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(res.json().access_token) });
      assert.equal(me.statusCode, 200);
      assert.equal(me.json().role, 'maintainer');
      assert.equal(me.json().source, 'ldap');
      assert.equal(me.json().email, 'alice@example.org');
      assert.equal(me.json().full_name, 'Alice Liddell');
      const row = await t.ctx.users.byUsername('alice');
      assert.ok(row);
      assert.equal(row.source, 'ldap');
      assert.equal(row.password_hash, null);
      const audit = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'LOGIN').where('username', '=', 'alice').execute();
      assert.ok(audit.some((a) => a.result === 'SUCCESS'));
    });

    it('keeps one local record however the login name is capitalised', async () => {
      const res = await tokenRequest(t, 'ALICE', 'alice-pw');
      assert.equal(res.statusCode, 200, res.body);
      const rows = await t.ctx.db.selectFrom('users').select('username').where('source', '=', 'ldap').execute();
      assert.deepEqual(rows.map((r) => r.username).filter((u) => u.toLowerCase() === 'alice'), ['alice']);
    });

    it('audits the creation of a directory account as USER_CREATE', async () => {
      const created = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'USER_CREATE').execute();
      const alice = created.filter((a) => /\balice\b/.test(a.detail ?? ''));
      assert.equal(alice.length, 1, JSON.stringify(created));
      assert.equal(alice[0]!.username, 'ldap');
      assert.equal(alice[0]!.result, 'SUCCESS');
      assert.match(alice[0]!.detail ?? '', /^created alice; source=ldap; role=maintainer$/);
    });

    it('locks a directory account after 5 failures whatever the case of the name', async () => {
      assert.equal((await tokenRequest(t, 'erin', 'erin-pw')).statusCode, 200);
      for (const name of ['erin', 'ERIN', 'Erin', 'eRin', 'erIN']) {
        assert.equal((await tokenRequest(t, name, 'not-erin')).statusCode, 401, name);
      }
      for (const name of ['ERIN', 'Erin', 'erin']) {
        const locked = await tokenRequest(t, name, 'erin-pw');
        assert.equal(locked.statusCode, 429, name);
        assert.equal(locked.json().code, 'account_locked');
        assert.ok(Number(locked.headers['retry-after']) > 800);
      }
    });

    it('maps a posixGroup membership too', async () => {
      const res = await tokenRequest(t, 'dora', 'dora-pw');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await t.ctx.users.byUsername('dora'))?.role, 'reader');
    });

    it('updates the role at the next login after a group change in the directory', async () => {
      assert.equal((await tokenRequest(t, 'carol', 'carol-pw')).statusCode, 200);
      assert.equal((await t.ctx.users.byUsername('carol'))?.role, 'maintainer');
      await changeGroup('add', 'leads', 'carol');
      try {
        const again = await tokenRequest(t, 'carol', 'carol-pw');
        assert.equal(again.statusCode, 200, again.body);
        assert.equal((await t.ctx.users.byUsername('carol'))?.role, 'admin');
        const change = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'USER_ROLE_CHANGE').orderBy('seq', 'desc').executeTakeFirstOrThrow();
        assert.equal(change.username, 'ldap');
        assert.equal(change.detail, 'carol: maintainer -> admin; source=ldap');
        const settings = await t.app.inject({ method: 'GET', url: '/settings', headers: bearer(again.json().access_token) });
        assert.equal(settings.statusCode, 200);
      } finally {
        await changeGroup('delete', 'leads', 'carol');
      }
      // Taken out of the admin group: the next login is back to maintainer.
      assert.equal((await tokenRequest(t, 'carol', 'carol-pw')).statusCode, 200);
      assert.equal((await t.ctx.users.byUsername('carol'))?.role, 'maintainer');
    });

    it('updates the role at the next login after the mapping settings change', async () => {
      await patchSettings(t, admin, { group_maintainer: null, group_uploader: 'devs' });
      try {
        assert.equal((await tokenRequest(t, 'alice', 'alice-pw')).statusCode, 200);
        assert.equal((await t.ctx.users.byUsername('alice'))?.role, 'uploader');
      } finally {
        await patchSettings(t, admin, { group_maintainer: 'devs', group_uploader: null });
      }
    });

    it('refuses a wrong directory password with 401', async () => {
      const res = await tokenRequest(t, 'alice', 'not-alice');
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().code, 'invalid_credentials');
    });

    it('refuses a directory user whose groups map to no role, without creating an account', async () => {
      const res = await tokenRequest(t, 'bob', 'bob-pw');
      assert.equal(res.statusCode, 401);
      assert.equal(await t.ctx.users.byUsername('bob'), undefined);
      const audit = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'LOGIN').where('username', '=', 'bob').execute();
      assert.ok(audit.some((a) => a.result === 'FAILURE'));
    });

    it('refuses an unknown user and leaves local accounts on their local password', async () => {
      assert.equal((await tokenRequest(t, 'nobody', 'whatever')).statusCode, 401);
      await t.tokenFor('uploader', 'localuser');
      assert.equal((await tokenRequest(t, 'localuser', 'alice-pw')).statusCode, 401);
    });

    it('deactivates a directory account whose groups stop mapping to a role, ending its sessions and tokens', async () => {
      const first = await tokenRequest(t, 'carol', 'carol-pw');
      assert.equal(first.statusCode, 200, first.body);
      const session = first.json().access_token as string;
      const token = (await t.app.inject({ method: 'POST', url: '/auth/api-tokens', headers: bearer(session), payload: { name: 'carol-ci' } })).json().token as string;
      await changeGroup('delete', 'devs', 'carol');
      try {
        const refused = await tokenRequest(t, 'carol', 'carol-pw');
        assert.equal(refused.statusCode, 401);
        assert.equal((await t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(session) })).statusCode, 401, 'session ended');
        assert.equal((await t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) })).statusCode, 401, 'API token stopped');
        assert.equal((await t.ctx.users.byUsername('carol'))?.is_active, 0);
        const audit = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'LOGIN').where('username', '=', 'carol').orderBy('seq', 'desc').executeTakeFirstOrThrow();
        assert.equal(audit.result, 'FAILURE');
        assert.match(audit.detail ?? '', /directory_role_removed/);
      } finally {
        await changeGroup('add', 'devs', 'carol');
      }
      // Mapped again, the account stays off until an admin turns it back on.
      assert.equal((await tokenRequest(t, 'carol', 'carol-pw')).statusCode, 401);
      await t.app.inject({ method: 'PATCH', url: '/auth/users/carol', headers: bearer(admin), payload: { active: true } });
      assert.equal((await tokenRequest(t, 'carol', 'carol-pw')).statusCode, 200);
    });

    it('looks users up by the configured attribute (ldap_user_attribute)', async () => {
      await patchSettings(t, admin, { ldap_user_attribute: 'sAMAccountName' });
      try {
        // OpenLDAP entries have no sAMAccountName: with Active Directory's attribute nobody is found.
        assert.equal((await tokenRequest(t, 'alice', 'alice-pw')).statusCode, 401);
      } finally {
        await patchSettings(t, admin, { ldap_user_attribute: 'uid' });
      }
      assert.equal((await tokenRequest(t, 'alice', 'alice-pw')).statusCode, 200);
    });

    it('does not consult the directory when ldap_enabled is false', async () => {
      await patchSettings(t, admin, { ldap_enabled: false });
      try {
        assert.equal((await tokenRequest(t, 'alice', 'alice-pw')).statusCode, 401);
      } finally {
        await patchSettings(t, admin, { ldap_enabled: true });
      }
      assert.equal((await tokenRequest(t, 'alice', 'alice-pw')).statusCode, 200);
    });
  });
}

describe('LDAP login (community edition)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { EDITION: 'community' } });
    await patchSettings(t, await t.tokenFor('admin'), ldapSettings());
  });
  after(() => t.close());

  it('never consults the directory: valid directory credentials get 401 and no account', async () => {
    const res = await tokenRequest(t, 'alice', 'alice-pw');
    assert.equal(res.statusCode, 401);
    assert.equal(await t.ctx.users.byUsername('alice'), undefined);
  });
});
