/**
 * The directory (LDAP) side of a login: builds the DirectoryLogin the AuthService calls for
 * accounts that are unknown locally or were created from the directory.
 */
import type { Logger } from 'pino';
import { authenticateLdap, mapGroupsToRole, type LdapConfig, type LdapFailure, type LdapOptions } from '../adapters/ldap/index.js';
import type { DirectoryLogin } from './auth.js';
import type { SettingsSnapshot } from './settings.js';

/** What the directory login needs: the settings (re-read on every call), the edition and a logger. */
export interface DirectoryDeps {
  settings: { all(): Promise<SettingsSnapshot> };
  edition: 'community' | 'enterprise';
  log: Logger;
  ldap?: LdapOptions;
}

/** Failures that say the directory itself is broken rather than the caller being wrong: worth a warning. */
const OPERATIONAL: ReadonlySet<LdapFailure> = new Set(['service_bind_failed', 'ldap_misconfigured', 'ldap_unavailable', 'ambiguous_user']);

/** The LdapConfig from the settings, or null when LDAP is off or incomplete (then it is not consulted). */
export function ldapConfigFrom(settings: SettingsSnapshot): LdapConfig | null {
  if (!settings.ldap_url || !settings.ldap_base_dn) return null;
  return {
    ldap_url: settings.ldap_url,
    ldap_starttls: settings.ldap_starttls,
    ldap_bind_dn: settings.ldap_bind_dn,
    ldap_bind_password: settings.ldap_bind_password,
    ldap_base_dn: settings.ldap_base_dn,
    ldap_verify_cert: settings.ldap_verify_cert,
    ca_bundle_path: settings.ca_bundle_path,
    ldap_user_attribute: settings.ldap_user_attribute,
  };
}

/**
 * DirectoryLogin backed by the ldap_* and group_* settings. LDAP login is an Enterprise
 * feature, so the Community edition never consults the directory (answers null).
 * A directory user whose groups map to no role is refused with `no_role_mapping`.
 */
export function createDirectoryLogin(deps: DirectoryDeps): DirectoryLogin {
  return async (username, password) => {
    if (deps.edition !== 'enterprise') return null;
    const settings = await deps.settings.all();
    if (!settings.ldap_enabled) return null;
    const config = ldapConfigFrom(settings);
    if (!config) {
      deps.log.warn('ldap_enabled is true but ldap_url or ldap_base_dn is not set; the directory is not consulted');
      return null;
    }
    const result = await authenticateLdap(config, username, password, deps.ldap);
    if (!result.ok) {
      // The detail names DNs and the server's message, never a password.
      if (OPERATIONAL.has(result.reason)) deps.log.warn({ reason: result.reason, detail: result.detail }, 'LDAP login could not be checked');
      else deps.log.debug({ reason: result.reason }, 'LDAP login refused');
      return { ok: false, reason: result.reason };
    }
    const role = mapGroupsToRole(result.groups, settings);
    if (!role) {
      deps.log.info({ username, groups: result.groups.length }, 'LDAP user is in no group mapped to a role; login refused');
      return { ok: false, reason: 'no_role_mapping' };
    }
    return { ok: true, role, email: result.email ?? null, fullName: result.fullName ?? null };
  };
}
