/**
 * LDAP login (OpenLDAP or Active Directory) with ldapts: find the user with the service account,
 * prove the password by binding as the user on a separate connection, then collect the groups.
 * Every call is bounded in time and answers a result instead of throwing.
 */
import { isIP } from 'node:net';
import { connect as tlsConnect, rootCertificates, type ConnectionOptions, type TLSSocket } from 'node:tls';
import type { Client, Entry } from 'ldapts';

/** ldapts, loaded at the first directory login or check: a service without LDAP never holds it. */
type Ldapts = typeof import('ldapts');
const loadLdapts = (): Promise<Ldapts> => import('ldapts');
import { readConfinedFile } from '../storage/confined-file.js';
import { escapeFilterValue } from './names.js';

/** The ldap_* settings (same keys as the settings table). */
export interface LdapConfig {
  /** `ldap://host:389` or `ldaps://host:636`. */
  ldap_url: string;
  /** Upgrade an ldap:// connection with STARTTLS before binding. */
  ldap_starttls?: boolean | null;
  /** Service account used for searches; anonymous searches when empty. */
  ldap_bind_dn?: string | null;
  ldap_bind_password?: string | null;
  ldap_base_dn: string;
  /** Check the server certificate and host name (default true). */
  ldap_verify_cert?: boolean | null;
  /** PEM file of extra trusted CAs, added to the system store; read only under `LdapOptions.caBundleDir`. */
  ca_bundle_path?: string | null;
  /** The attribute holding login names: `uid` (OpenLDAP) or `sAMAccountName` (Active Directory); both when unset. */
  ldap_user_attribute?: 'uid' | 'sAMAccountName' | null;
}

export interface LdapOptions {
  /** Limit for the TCP connect and for each LDAP operation (default 5000 ms). */
  timeoutMs?: number;
  /**
   * CA_BUNDLE_DIR: the folder ca_bundle_path must resolve inside (links followed). Left out or
   * null, any ca_bundle_path is refused: a CA bundle decides whom the bind password goes to.
   */
  caBundleDir?: string | null;
}

/** The one answer for a ca_bundle_path that cannot be used, whatever the reason (no probing of files). */
export const CA_BUNDLE_UNREADABLE = 'cannot read ca_bundle_path: it must be a readable file under CA_BUNDLE_DIR';

export type LdapFailure =
  | 'empty_password'
  | 'invalid_username'
  | 'user_not_found'
  | 'ambiguous_user'
  | 'bad_credentials'
  | 'service_bind_failed'
  | 'ldap_misconfigured'
  | 'ldap_unavailable';

export type LdapAuthResult =
  | { ok: true; dn: string; email?: string; fullName?: string; groups: string[] }
  | { ok: false; reason: LdapFailure; detail: string };

const USER_ATTRIBUTES = ['uid', 'sAMAccountName', 'mail', 'cn', 'displayName', 'memberOf'];
const MAX_GROUPS = 1000;
const MAX_USERNAME = 256;

/** Checks `username`/`password` against the directory; never throws. */
export async function authenticateLdap(config: LdapConfig, username: string, password: string, options: LdapOptions = {}): Promise<LdapAuthResult> {
  // An empty password is an "unauthenticated bind" (RFC 4513 §5.1.2) that many servers accept: never a login.
  if (password === '') return fail('empty_password', 'an empty password is never accepted');
  if (username.trim() === '' || username.length > MAX_USERNAME) return fail('invalid_username', 'the user name is empty or too long');

  const timeoutMs = options.timeoutMs ?? 5000;
  let tls: ConnectionOptions;
  try {
    tls = await tlsOptions(config, options);
  } catch (err) {
    // Logged by the caller, never answered to the user: the precise reason may stay.
    return fail('ldap_misconfigured', `${CA_BUNDLE_UNREADABLE} (${message(err)})`);
  }
  const ldap = await loadLdapts();
  const service = newClient(ldap, config, tls, timeoutMs);
  try {
    const ready = await openAsService(ldap, service, config, tls);
    if (!ready.ok) return ready;

    const value = escapeFilterValue(username);
    let entries: Entry[];
    try {
      ({ searchEntries: entries } = await service.search(config.ldap_base_dn, {
        scope: 'sub',
        filter: config.ldap_user_attribute ? `(${config.ldap_user_attribute}=${value})` : `(|(uid=${value})(sAMAccountName=${value}))`,
        attributes: USER_ATTRIBUTES,
        sizeLimit: 2,
      }));
    } catch (err) {
      if (err instanceof ldap.SizeLimitExceededError) return fail('ambiguous_user', `more than one directory entry is named ${username}`);
      return fail('ldap_unavailable', `user search failed: ${message(err)}`);
    }
    if (entries.length === 0) return fail('user_not_found', `no directory entry for ${username}`);
    if (entries.length > 1) return fail('ambiguous_user', `more than one directory entry is named ${username}`);
    const user = entries[0] as Entry;

    // A separate connection, so the service connection keeps its rights for the group search.
    const proof = newClient(ldap, config, tls, timeoutMs);
    try {
      if (useStartTls(config)) await proof.startTLS(startTlsOptions(config, tls));
      await proof.bind(user.dn, password);
    } catch (err) {
      if (err instanceof ldap.InvalidCredentialsError) return fail('bad_credentials', `wrong password for ${user.dn}`);
      return fail('ldap_unavailable', `user bind failed: ${message(err)}`);
    } finally {
      await proof.unbind().catch(() => undefined);
    }

    const groups = await groupsOf(service, config, user);
    if (!groups.ok) return groups;
    const email = first(user, 'mail');
    const fullName = first(user, 'displayName') ?? first(user, 'cn');
    return { ok: true, dn: user.dn, ...(email ? { email } : {}), ...(fullName ? { fullName } : {}), groups: groups.groups };
  } finally {
    await service.unbind().catch(() => undefined);
  }
}

/** Connects and binds with the service account only (settings "test LDAP"); never throws. */
export async function testLdapConnection(config: LdapConfig, options: LdapOptions = {}): Promise<{ ok: boolean; detail: string }> {
  let tls: ConnectionOptions;
  try {
    tls = await tlsOptions(config, options);
  } catch {
    // Answered to the admin: one message, so it cannot tell which files exist.
    return { ok: false, detail: CA_BUNDLE_UNREADABLE };
  }
  const ldap = await loadLdapts();
  const client = newClient(ldap, config, tls, options.timeoutMs ?? 5000);
  try {
    const ready = await openAsService(ldap, client, config, tls);
    if (!ready.ok) return { ok: false, detail: ready.detail };
    try {
      await client.search(config.ldap_base_dn, { scope: 'base', attributes: ['1.1'] });
    } catch (err) {
      return { ok: false, detail: `bound, but the base DN ${config.ldap_base_dn} cannot be read: ${message(err)}` };
    }
    const who = config.ldap_bind_dn ? `as ${config.ldap_bind_dn}` : 'anonymously';
    return { ok: true, detail: `connected to ${config.ldap_url}${useStartTls(config) ? ' with STARTTLS' : ''} and bound ${who}` };
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

function newClient(ldap: Ldapts, config: LdapConfig, tls: ConnectionOptions, timeoutMs: number): Client {
  return new ldap.Client({
    url: config.ldap_url,
    timeout: timeoutMs,
    connectTimeout: timeoutMs,
    // ldapts speaks TLS from the first byte whenever tlsOptions are given, even for ldap://.
    ...(config.ldap_url.toLowerCase().startsWith('ldaps://') ? { tlsOptions: tls } : {}),
    strictDN: true,
    createSecureConnection: boundedTlsConnect(timeoutMs),
  });
}

/**
 * ldapts puts no limit on the STARTTLS handshake: a server that accepts the request and then
 * stays silent would hold the login forever. This tls.connect gives up after `timeoutMs` of silence.
 */
function boundedTlsConnect(timeoutMs: number): typeof tlsConnect {
  const guarded = (...args: unknown[]): TLSSocket => {
    const socket = (tlsConnect as (...a: unknown[]) => TLSSocket)(...args);
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`TLS handshake timed out after ${timeoutMs} ms`)));
    socket.once('secureConnect', () => socket.setTimeout(0));
    return socket;
  };
  // Same call signatures as tls.connect; the overloads cannot be spelled by a single wrapper.
  return guarded as typeof tlsConnect;
}

function useStartTls(config: LdapConfig): boolean {
  return config.ldap_starttls === true && config.ldap_url.toLowerCase().startsWith('ldap://');
}

/** STARTTLS upgrades an existing socket, so the name to verify must be given explicitly. */
function startTlsOptions(config: LdapConfig, tls: ConnectionOptions): ConnectionOptions {
  const host = new URL(config.ldap_url).hostname.replace(/^\[|\]$/g, '');
  return { ...tls, host, ...(isIP(host) ? {} : { servername: host }) };
}

async function tlsOptions(config: LdapConfig, ldapOptions: LdapOptions): Promise<ConnectionOptions> {
  const verify = config.ldap_verify_cert !== false;
  const options: ConnectionOptions = { rejectUnauthorized: verify, minVersion: 'TLSv1.2' };
  if (config.ca_bundle_path) {
    if (!ldapOptions.caBundleDir) throw new Error('CA_BUNDLE_DIR is not set');
    const bundle = await readConfinedFile(config.ca_bundle_path, ldapOptions.caBundleDir);
    // Node replaces the system store when `ca` is set; keep it so public CAs stay trusted.
    options.ca = [...rootCertificates, bundle];
  }
  return options;
}

async function openAsService(ldap: Ldapts, client: Client, config: LdapConfig, tls: ConnectionOptions): Promise<{ ok: true } | Extract<LdapAuthResult, { ok: false }>> {
  try {
    if (useStartTls(config)) await client.startTLS(startTlsOptions(config, tls));
  } catch (err) {
    return fail('ldap_unavailable', `cannot connect to ${config.ldap_url}: ${message(err)}`);
  }
  if (!config.ldap_bind_dn) return { ok: true };
  if (!config.ldap_bind_password) return fail('service_bind_failed', 'ldap_bind_dn is set but ldap_bind_password is empty');
  try {
    await client.bind(config.ldap_bind_dn, config.ldap_bind_password);
    return { ok: true };
  } catch (err) {
    if (err instanceof ldap.InvalidCredentialsError) return fail('service_bind_failed', `the directory refused the bind DN ${config.ldap_bind_dn}`);
    return fail('ldap_unavailable', `cannot bind to ${config.ldap_url}: ${message(err)}`);
  }
}

/** memberOf (AD, OpenLDAP overlay) plus groups that list the user: groupOfNames, groupOfUniqueNames, posixGroup. */
async function groupsOf(client: Client, config: LdapConfig, user: Entry): Promise<{ ok: true; groups: string[] } | Extract<LdapAuthResult, { ok: false }>> {
  const found = new Map<string, string>();
  for (const dn of values(user, 'memberOf')) found.set(dn.toLowerCase(), dn);
  const dn = escapeFilterValue(user.dn);
  const uid = first(user, 'uid');
  const filter =
    `(|(&(objectClass=groupOfNames)(member=${dn}))(&(objectClass=groupOfUniqueNames)(uniqueMember=${dn}))` +
    (uid ? `(&(objectClass=posixGroup)(memberUid=${escapeFilterValue(uid)}))` : '') +
    ')';
  try {
    const { searchEntries } = await client.search(config.ldap_base_dn, { scope: 'sub', filter, attributes: ['cn'], sizeLimit: MAX_GROUPS });
    for (const group of searchEntries) found.set(group.dn.toLowerCase(), group.dn);
  } catch (err) {
    return fail('ldap_unavailable', `group search failed: ${message(err)}`);
  }
  return { ok: true, groups: [...found.values()] };
}

function values(entry: Entry, name: string): string[] {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === name.toLowerCase());
  const raw = key === undefined ? undefined : entry[key];
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v))).filter((v) => v !== '');
}

function first(entry: Entry, name: string): string | undefined {
  return values(entry, name)[0];
}

function fail(reason: LdapFailure, detail: string): Extract<LdapAuthResult, { ok: false }> {
  return { ok: false, reason, detail };
}

function message(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 300);
}
