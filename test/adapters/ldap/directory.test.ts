import assert from 'node:assert/strict';
import { symlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authenticateLdap, CA_BUNDLE_UNREADABLE, testLdapConnection, type LdapConfig } from '../../../src/adapters/ldap/directory.js';
import { mapGroupsToRole } from '../../../src/adapters/ldap/roles.js';
import { startSlapd, type RunningSlapd, type SlapdOptions } from '../../helpers/slapd.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { startSilentServer } from '../../../harness/net.js';

const DIRECTORY: SlapdOptions = {
  users: [
    { uid: 'svc-tollgate', password: 'service-pw' },
    { uid: 'alice', password: 'alice-pw', cn: 'Alice Admin', mail: 'alice@example.org' },
    { uid: 'bob', password: 'bob-pw', cn: 'Bob Maintainer' },
    { uid: 'carol', password: 'carol-pw' },
    { uid: 'dave', password: 'dave-pw' },
    { uid: 'jürgen', password: 'jürgen-pw', mail: 'juergen@example.org' },
  ],
  groups: [
    { cn: 'admins', members: ['alice'] },
    { cn: 'maintainers', members: ['bob'], kind: 'groupOfUniqueNames' },
    { cn: 'readers', members: ['carol', 'alice'], kind: 'posixGroup' },
    { cn: 'auditors', members: ['jürgen'] },
  ],
};

function ok<T extends { ok: boolean }>(result: T): Extract<T, { ok: true }> {
  assert.equal(result.ok, true, JSON.stringify(result));
  return result as Extract<T, { ok: true }>;
}

function failure<T extends { ok: boolean }>(result: T, reason: string): void {
  assert.equal(result.ok, false, JSON.stringify(result));
  assert.equal((result as { reason?: string }).reason, reason, JSON.stringify(result));
}

describe('LDAP against a real slapd (groups found by search)', () => {
  let slapd: RunningSlapd;
  let config: LdapConfig;
  const mapping = () => ({
    group_admin: slapd.groupDn('admins'),
    group_maintainer: 'Maintainers',
    group_auditor: 'CN=Auditors,OU=Groups,DC=Example,DC=Org',
    group_reader: 'readers',
  });

  before(async () => {
    slapd = await startSlapd({ ...DIRECTORY, tls: true });
    config = { ldap_url: slapd.url, ldap_base_dn: slapd.baseDn, ldap_bind_dn: slapd.userDn('svc-tollgate'), ldap_bind_password: 'service-pw' };
  });
  after(async () => {
    await slapd?.stop();
  });

  it('logs a user in and returns DN, e-mail, name and groups', async () => {
    const result = ok(await authenticateLdap(config, 'alice', 'alice-pw'));
    assert.equal(result.dn, slapd.userDn('alice'));
    assert.equal(result.email, 'alice@example.org');
    assert.equal(result.fullName, 'Alice Admin');
    assert.deepEqual([...result.groups].sort(), [slapd.groupDn('admins'), slapd.groupDn('readers')].sort());
    assert.equal(mapGroupsToRole(result.groups, mapping()), 'admin');
  });

  it('finds groupOfUniqueNames and posixGroup memberships', async () => {
    const bob = ok(await authenticateLdap(config, 'bob', 'bob-pw'));
    assert.deepEqual(bob.groups, [slapd.groupDn('maintainers')]);
    assert.equal(mapGroupsToRole(bob.groups, mapping()), 'maintainer');
    const carol = ok(await authenticateLdap(config, 'carol', 'carol-pw'));
    assert.deepEqual(carol.groups, [slapd.groupDn('readers')]);
    assert.equal(mapGroupsToRole(carol.groups, mapping()), 'reader');
  });

  it('logs in a user without groups, who maps to no role', async () => {
    const dave = ok(await authenticateLdap(config, 'dave', 'dave-pw'));
    assert.deepEqual(dave.groups, []);
    assert.equal(dave.email, undefined);
    assert.equal(mapGroupsToRole(dave.groups, mapping()), null);
  });

  it('handles non-ASCII user names', async () => {
    const result = ok(await authenticateLdap(config, 'jürgen', 'jürgen-pw'));
    assert.equal(result.email, 'juergen@example.org');
    assert.equal(mapGroupsToRole(result.groups, mapping()), 'auditor');
  });

  it('refuses a wrong password, an unknown user and an empty password', async () => {
    failure(await authenticateLdap(config, 'alice', 'wrong'), 'bad_credentials');
    failure(await authenticateLdap(config, 'alice', 'alice-pw '), 'bad_credentials');
    failure(await authenticateLdap(config, 'mallory', 'alice-pw'), 'user_not_found');
    failure(await authenticateLdap(config, 'alice', ''), 'empty_password');
    failure(await authenticateLdap(config, '', 'x'), 'invalid_username');
    // An empty password is refused before any network traffic, whatever the server would say.
    failure(await authenticateLdap({ ...config, ldap_url: 'ldap://127.0.0.1:1' }, 'alice', ''), 'empty_password');
  });

  it('is not fooled by filter injection', async () => {
    for (const attempt of ['*', '*)(uid=*', 'alice)(|(uid=*', 'ali*', '*)(|(objectClass=*)', 'alice\\', 'alice\0']) {
      const result = await authenticateLdap(config, attempt, 'alice-pw');
      assert.equal(result.ok, false, `login succeeded with ${JSON.stringify(attempt)}`);
      failure(result, 'user_not_found');
    }
  });

  it('reports a wrong service password', async () => {
    failure(await authenticateLdap({ ...config, ldap_bind_password: 'nope' }, 'alice', 'alice-pw'), 'service_bind_failed');
    failure(await authenticateLdap({ ...config, ldap_bind_password: '' }, 'alice', 'alice-pw'), 'service_bind_failed');
  });

  it('testLdapConnection: good bind, bad bind, bad base, server down', async () => {
    const good = await testLdapConnection(config);
    assert.equal(good.ok, true, good.detail);
    assert.match(good.detail, /svc-tollgate/);
    const bad = await testLdapConnection({ ...config, ldap_bind_password: 'nope' });
    assert.equal(bad.ok, false);
    assert.match(bad.detail, /refused the bind DN/);
    const base = await testLdapConnection({ ...config, ldap_base_dn: 'dc=nowhere,dc=org' });
    assert.equal(base.ok, false, base.detail);
    const started = Date.now();
    const down = await testLdapConnection({ ...config, ldap_url: 'ldap://127.0.0.1:1' });
    assert.equal(down.ok, false);
    failure(await authenticateLdap({ ...config, ldap_url: 'ldap://127.0.0.1:1' }, 'alice', 'alice-pw'), 'ldap_unavailable');
    assert.ok(Date.now() - started < 2000);
  });

  it('ldaps:// verifies the certificate: refused by default, accepted with ca_bundle_path or verify_cert=false', async () => {
    assert.ok(slapd.ldapsUrl && slapd.caFile);
    const ldaps = { ...config, ldap_url: slapd.ldapsUrl };
    failure(await authenticateLdap(ldaps, 'alice', 'alice-pw'), 'ldap_unavailable');
    const caDir = { caBundleDir: dirname(slapd.caFile) };
    ok(await authenticateLdap({ ...ldaps, ca_bundle_path: slapd.caFile }, 'alice', 'alice-pw', caDir));
    ok(await authenticateLdap({ ...ldaps, ldap_verify_cert: false }, 'alice', 'alice-pw'));
    failure(await authenticateLdap({ ...ldaps, ca_bundle_path: slapd.caFile }, 'alice', 'wrong', caDir), 'bad_credentials');
    const test = await testLdapConnection({ ...ldaps, ca_bundle_path: slapd.caFile }, caDir);
    assert.equal(test.ok, true, test.detail);
  });

  it('STARTTLS upgrades ldap:// and verifies the certificate', async () => {
    assert.ok(slapd.caFile);
    const starttls = { ...config, ldap_starttls: true };
    failure(await authenticateLdap(starttls, 'alice', 'alice-pw'), 'ldap_unavailable');
    const caDir = { caBundleDir: dirname(slapd.caFile) };
    ok(await authenticateLdap({ ...starttls, ca_bundle_path: slapd.caFile }, 'alice', 'alice-pw', caDir));
    ok(await authenticateLdap({ ...starttls, ldap_verify_cert: false }, 'bob', 'bob-pw'));
    const test = await testLdapConnection({ ...starttls, ca_bundle_path: slapd.caFile }, caDir);
    assert.equal(test.ok, true, test.detail);
    assert.match(test.detail, /STARTTLS/);
  });

  it('does not trust a CA bundle that did not sign the server certificate', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const other = await startSlapd({ tls: true });
    t.after(() => other.stop());
    assert.ok(other.caFile && slapd.ldapsUrl);
    const { readFile } = await import('node:fs/promises');
    await writeFile(`${dir}/other.pem`, await readFile(other.caFile));
    failure(await authenticateLdap({ ...config, ldap_url: slapd.ldapsUrl, ca_bundle_path: `${dir}/other.pem` }, 'alice', 'alice-pw', { caBundleDir: dir }), 'ldap_unavailable');
    const missing = await testLdapConnection({ ...config, ca_bundle_path: `${dir}/missing.pem` }, { caBundleDir: dir });
    assert.equal(missing.ok, false);
    assert.match(missing.detail, /ca_bundle_path/);
  });

  it('reads ca_bundle_path only under CA_BUNDLE_DIR, links resolved; every refusal says the same', async (t) => {
    assert.ok(slapd.ldapsUrl && slapd.caFile);
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    await symlink('/etc/passwd', `${dir}/passwd.pem`);
    await symlink(slapd.caFile, `${dir}/outside-ca.pem`);
    const ldaps = { ...config, ldap_url: slapd.ldapsUrl };
    const refused = [
      [slapd.caFile, {}],
      [slapd.caFile, { caBundleDir: null }],
      ['/etc/passwd', { caBundleDir: dir }],
      [`${dir}/../etc-passwd.pem`, { caBundleDir: dir }],
      [`${dir}/passwd.pem`, { caBundleDir: dir }],
      [`${dir}/outside-ca.pem`, { caBundleDir: dir }],
      [`${dir}/missing.pem`, { caBundleDir: dir }],
    ] as const;
    for (const [path, options] of refused) {
      failure(await authenticateLdap({ ...ldaps, ca_bundle_path: path }, 'alice', 'alice-pw', options), 'ldap_misconfigured');
      const test = await testLdapConnection({ ...ldaps, ca_bundle_path: path }, options);
      assert.deepEqual(test, { ok: false, detail: CA_BUNDLE_UNREADABLE }, path);
    }
    // The same bundle, copied into the folder, is trusted.
    const { readFile } = await import('node:fs/promises');
    await writeFile(`${dir}/ca.pem`, await readFile(slapd.caFile));
    ok(await authenticateLdap({ ...ldaps, ca_bundle_path: `${dir}/ca.pem` }, 'alice', 'alice-pw', { caBundleDir: dir }));
  });
});

describe('LDAP against a real slapd with the memberOf overlay', () => {
  let slapd: RunningSlapd;
  before(async () => {
    slapd = await startSlapd({ ...DIRECTORY, memberOf: true });
  });
  after(async () => {
    await slapd?.stop();
  });

  it('reads groups from memberOf and still finds posix groups', async () => {
    const config = { ldap_url: slapd.url, ldap_base_dn: slapd.baseDn, ldap_bind_dn: slapd.rootDn, ldap_bind_password: slapd.rootPassword };
    const alice = ok(await authenticateLdap(config, 'alice', 'alice-pw'));
    assert.deepEqual([...alice.groups].sort(), [slapd.groupDn('admins'), slapd.groupDn('readers')].sort());
  });
});

describe('LDAP server that never answers', () => {
  it('gives up after the timeout instead of hanging', async (t) => {
    const port = await startSilentServer(t);
    const config: LdapConfig = { ldap_url: `ldap://127.0.0.1:${port}`, ldap_base_dn: 'dc=example,dc=org', ldap_bind_dn: 'cn=x', ldap_bind_password: 'y' };
    const started = Date.now();
    failure(await authenticateLdap(config, 'alice', 'pw', { timeoutMs: 300 }), 'ldap_unavailable');
    assert.equal((await testLdapConnection({ ...config, ldap_starttls: true }, { timeoutMs: 300 })).ok, false);
    failure(await authenticateLdap({ ...config, ldap_url: `ldaps://127.0.0.1:${port}` }, 'alice', 'pw', { timeoutMs: 300 }), 'ldap_unavailable');
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
  });
});
