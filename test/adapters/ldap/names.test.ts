import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dnEquals, escapeFilterValue, normalizeDn, parseDn } from '../../../src/adapters/ldap/names.js';
import { mapGroupsToRole } from '../../../src/adapters/ldap/roles.js';

describe('escapeFilterValue (RFC 4515)', () => {
  it('escapes the filter metacharacters and NUL', () => {
    assert.equal(escapeFilterValue('*)(uid=*'), '\\2a\\29\\28uid=\\2a');
    assert.equal(escapeFilterValue('a\\b'), 'a\\5cb');
    assert.equal(escapeFilterValue('a\0b'), 'a\\00b');
  });

  it('keeps plain and non-ASCII names, escapes control characters', () => {
    assert.equal(escapeFilterValue('alice.smith-2'), 'alice.smith-2');
    assert.equal(escapeFilterValue('jürgen'), 'jürgen');
    assert.equal(escapeFilterValue('a\nb\x7f'), 'a\\0ab\\7f');
  });
});

describe('DN comparison (RFC 4514)', () => {
  it('ignores case, spaces around separators and escaping style', () => {
    assert.ok(dnEquals('cn=Admins,ou=Groups,dc=Example,dc=org', 'CN=admins, OU=groups , DC=example,DC=ORG'));
    assert.ok(dnEquals('cn=Ops\\, Team,dc=example', 'cn=ops\\2c team,dc=example'));
    assert.ok(dnEquals('cn="Ops, Team",dc=example', 'cn=ops\\, team,dc=example'));
    assert.ok(dnEquals('cn=a+uid=b,dc=x', 'uid=B+cn=A,dc=x'));
  });

  it('tells different DNs apart', () => {
    assert.ok(!dnEquals('cn=admins,dc=example,dc=org', 'cn=admins,dc=example,dc=com'));
    assert.ok(!dnEquals('cn=admins,dc=example', 'cn=admins\\,dc=example'), 'an escaped comma is not a separator');
    assert.ok(!dnEquals('cn=admins', 'not a dn'));
    assert.equal(normalizeDn('garbage'), null);
    assert.equal(normalizeDn('cn=x,'), null);
  });

  it('keeps significant escaped spaces', () => {
    assert.deepEqual(parseDn('cn=\\ x\\ ,dc=y'), [[{ type: 'cn', value: ' x ' }], [{ type: 'dc', value: 'y' }]]);
  });
});

describe('mapGroupsToRole', () => {
  const groups = ['cn=Readers,ou=groups,dc=example,dc=org', 'cn=uploaders,ou=groups,dc=example,dc=org'];

  it('returns the highest mapped role', () => {
    const mapping = {
      group_admin: 'cn=admins,ou=groups,dc=example,dc=org',
      group_uploader: 'CN=Uploaders, OU=Groups, DC=example, DC=org',
      group_reader: 'readers',
    };
    assert.equal(mapGroupsToRole(groups, mapping), 'uploader');
    assert.equal(mapGroupsToRole([...groups, 'cn=admins,ou=groups,dc=example,dc=org'], mapping), 'admin');
  });

  it('matches a bare group name against the CN only', () => {
    assert.equal(mapGroupsToRole(groups, { group_reader: 'READERS' }), 'reader');
    assert.equal(mapGroupsToRole(groups, { group_reader: 'groups' }), null);
  });

  it('does not match a group of the same name elsewhere when a DN is mapped', () => {
    assert.equal(mapGroupsToRole(['cn=admins,ou=other,dc=example,dc=org'], { group_admin: 'cn=admins,ou=groups,dc=example,dc=org' }), null);
  });

  it('returns null without groups or without mapping', () => {
    assert.equal(mapGroupsToRole([], { group_admin: 'admins' }), null);
    assert.equal(mapGroupsToRole(groups, {}), null);
    assert.equal(mapGroupsToRole(groups, { group_admin: '', group_maintainer: null }), null);
  });
});
