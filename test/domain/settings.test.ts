import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RATE_LIMIT_NAMES } from '../../src/domain/rate-limits.js';
import { SECRET_MASK, SETTINGS, SETTING_KEYS, isSecretSetting, secretsClearedBy, settingProblems, type SettingDeclaration, type SettingKey } from '../../src/domain/settings.js';
import { feedUrlProblem, isInsideDir } from '../../src/domain/settings-rules.js';

const defaults = Object.fromEntries(SETTING_KEYS.map((k) => [k, SETTINGS[k].default])) as Record<SettingKey, unknown>;
const stored = { ...defaults, ldap_url: 'ldap://dir.example.org', ldap_bind_password: 'pw', smtp_host: 'mail.example.org', smtp_port: 587, smtp_password: 'pw', webhook_url: 'https://hooks.example.org/x', webhook_secret: 's' };

describe('settings declarations', () => {
  it('binds each secret to settings that exist and are not secrets themselves', () => {
    const bound = SETTING_KEYS.filter((k) => (SETTINGS[k] as SettingDeclaration).boundTo);
    assert.deepEqual(bound, ['ldap_bind_password', 'smtp_password', 'webhook_secret']);
    for (const key of bound) {
      assert.ok(isSecretSetting(key));
      for (const target of (SETTINGS[key] as SettingDeclaration).boundTo!) {
        assert.ok(target in SETTINGS, target);
        assert.ok(!isSecretSetting(target as SettingKey), target);
      }
    }
  });

  it('secretsClearedBy: a changed destination clears the stored secret unless the patch supplies it', () => {
    assert.deepEqual(secretsClearedBy({ ldap_url: 'ldap://evil.example' }, stored), ['ldap_bind_password']);
    assert.deepEqual(secretsClearedBy({ ldap_url: 'ldap://evil.example', ldap_bind_password: SECRET_MASK }, stored), ['ldap_bind_password']);
    assert.deepEqual(secretsClearedBy({ ldap_url: 'ldap://evil.example', ldap_bind_password: 'typed' }, stored), []);
    assert.deepEqual(secretsClearedBy({ ldap_url: 'ldap://dir.example.org' }, stored), [], 'same value: no change');
    assert.deepEqual(secretsClearedBy({ smtp_port: 25 }, stored), ['smtp_password']);
    assert.deepEqual(secretsClearedBy({ smtp_tls: 'none' }, stored), ['smtp_password']);
    assert.deepEqual(secretsClearedBy({ smtp_host: null }, stored), ['smtp_password']);
    assert.deepEqual(secretsClearedBy({ smtp_user: 'other', smtp_from: 'a@b.c' }, stored), []);
    // Weakening how the directory is reached is a change of destination too (a spoofed server).
    assert.deepEqual(secretsClearedBy({ ldap_verify_cert: false }, stored), ['ldap_bind_password']);
    assert.deepEqual(secretsClearedBy({ ldap_starttls: !stored.ldap_starttls }, stored), ['ldap_bind_password']);
    assert.deepEqual(secretsClearedBy({ ca_bundle_path: '/srv/ca/other.pem' }, stored), ['ldap_bind_password']);
    assert.deepEqual(secretsClearedBy({ webhook_url: 'https://other.example/x', ldap_url: 'ldap://x' }, stored), ['ldap_bind_password', 'webhook_secret']);
    assert.deepEqual(secretsClearedBy({ webhook_url: 'https://other.example/x' }, { ...stored, webhook_secret: null }), [], 'nothing stored, nothing cleared');
  });

  it('rate_limits accepts exactly the Limits table names', () => {
    const schema = SETTINGS.rate_limits.schema as unknown as { properties: Record<string, unknown>; additionalProperties: boolean };
    assert.deepEqual(Object.keys(schema.properties).sort(), [...RATE_LIMIT_NAMES].sort());
    assert.equal(schema.additionalProperties, false);
  });

  it('feed URLs: http(s), or file:// under FEEDS_DIR by name', () => {
    const none = { feedsDir: null, caBundleDir: null };
    const feeds = { feedsDir: '/srv/feeds', caBundleDir: null };
    assert.equal(feedUrlProblem('https://osv.example/all.zip', none), null);
    assert.match(feedUrlProblem('file:///srv/feeds/a.json', none)!, /FEEDS_DIR/);
    assert.equal(feedUrlProblem('file:///srv/feeds/a.json', feeds), null);
    assert.equal(feedUrlProblem('file:///srv/feeds/sub/a.json', feeds), null);
    for (const bad of ['file:///etc/passwd', 'file:///srv/feeds/../../etc/passwd', 'file:///srv/feeds/%2e%2e/x', 'file:///srv/feeds', 'file:///srv/feeds-other/a', 'file://remote.example/srv/feeds/a']) {
      assert.ok(feedUrlProblem(bad, feeds), bad);
    }
    assert.ok(feedUrlProblem('gopher://x', feeds));
    assert.deepEqual(settingProblems({ vuln_feeds: [{ name: 'a', url: 'https://x.example/a', format: 'osv' }, { name: 'b', url: 'file:///etc/shadow', format: 'osv' }] }, feeds).map((p) => p.loc), [['vuln_feeds', '1', 'url']]);
  });

  it('isInsideDir: strictly inside, by name', () => {
    assert.equal(isInsideDir('/srv/ca', '/srv/ca/bundle.pem'), true);
    assert.equal(isInsideDir('/srv/ca', '/srv/ca/..pem'), true);
    assert.equal(isInsideDir('/srv/ca', '/srv/ca'), false);
    assert.equal(isInsideDir('/srv/ca', '/srv/ca/../x.pem'), false);
    assert.equal(isInsideDir('/srv/ca', '/srv/cab/x.pem'), false);
    assert.equal(isInsideDir('/srv/ca', 'bundle.pem'), false, 'relative paths are refused');
  });
});
