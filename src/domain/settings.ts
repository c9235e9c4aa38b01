import { Type, type TSchema } from 'typebox';
import { findDistribution } from './distributions.js';
import { RATE_LIMIT_NAMES } from './rate-limits.js';
import { RPM_SIGNATURE_POLICIES } from './rpm/signature-policy.js';
import { appUrlProblem, caBundlePathProblem, feedUrlProblem, normaliseAppUrl, type AllowedDirs } from './settings-rules.js';

/**
 * Every runtime setting, declared once: its schema (type and bounds), default, and whether it is
 * a secret (encrypted at rest, masked in answers). GET/PATCH /settings, the services and the
 * README table all read this. Later capabilities add their keys here.
 */
export interface SettingDeclaration {
  schema: TSchema;
  default: unknown;
  secret?: boolean;
  /**
   * Secrets only: the settings that say where the secret is sent. A change to any of them clears
   * the stored secret unless the same change supplies it again, so a stored credential can never
   * be redirected to a host it was not entered for.
   */
  boundTo?: readonly string[];
  /** Rules the schema cannot state, run on a schema-valid value; [] when it is acceptable. */
  check?: (value: never, dirs: AllowedDirs) => SettingProblem[];
  /** Canonical form stored for a valid value. */
  normalise?: (value: never) => unknown;
  description: string;
}

/** One thing wrong with a value; `loc` is the path inside the value (empty for the value itself). */
export interface SettingProblem {
  loc: string[];
  msg: string;
}

const problem = (msg: string | null, loc: string[] = []): SettingProblem[] => (msg ? [{ loc, msg }] : []);
const nullable = (rule: (value: string, dirs: AllowedDirs) => string | null) => (value: string | null, dirs: AllowedDirs) =>
  value === null ? [] : problem(rule(value, dirs));

const ARMORED_KEY = /-----BEGIN PGP PUBLIC KEY BLOCK-----[\s\S]+-----END PGP PUBLIC KEY BLOCK-----/;

const time = () => Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' });
const action = () => Type.Union([Type.Literal('block'), Type.Literal('review'), Type.Literal('warn'), Type.Literal('allow')]);
const perSeverity = <T extends TSchema>(item: () => T) =>
  Type.Object({ critical: item(), high: item(), medium: item(), low: item() }, { additionalProperties: false });

export const SETTINGS = {
  app_url: {
    schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]),
    default: null,
    check: nullable(appUrlProblem),
    normalise: (value: string | null) => (value === null ? null : normaliseAppUrl(value)),
    description: 'Public URL of the service, used in reset links and install commands (defaults to APP_URL)',
  },
  retention_days: { schema: Type.Integer({ minimum: 1, maximum: 36500 }), default: 90, description: 'Audit log retention in days' },
  rate_limits: {
    // Only the names of the Limits table: a misspelt name would otherwise be stored and ignored.
    schema: Type.Object(
      Object.fromEntries(RATE_LIMIT_NAMES.map((name) => [name, Type.Optional(Type.Integer({ minimum: 0, maximum: 100000 }))])),
      { additionalProperties: false },
    ),
    default: {},
    description: 'Overrides of rate limits per limit name (requests per minute, 0 = off)',
  },
  decide_min_role: { schema: Type.Union([Type.Literal('admin'), Type.Literal('maintainer')]), default: 'admin', description: 'Lowest role allowed to decide on packages in review' },
  ldap_enabled: { schema: Type.Boolean(), default: false, description: 'Try LDAP for logins not found locally' },
  ldap_url: { schema: Type.Union([Type.String({ pattern: '^ldaps?://', maxLength: 500 }), Type.Null()]), default: null, description: 'ldap:// or ldaps:// URL' },
  ldap_starttls: { schema: Type.Boolean(), default: false, description: 'Upgrade ldap:// with STARTTLS' },
  ldap_bind_dn: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Service account DN for user searches' },
  ldap_bind_password: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, secret: true, boundTo: ['ldap_url', 'ldap_starttls', 'ldap_verify_cert', 'ca_bundle_path'], description: 'Service account password' },
  ldap_base_dn: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Search base for users and groups' },
  ldap_user_attribute: { schema: Type.Union([Type.Literal('uid'), Type.Literal('sAMAccountName')]), default: 'uid', description: 'Directory attribute holding the login name' },
  ldap_verify_cert: { schema: Type.Boolean(), default: true, description: 'Verify the directory TLS certificate' },
  ca_bundle_path: {
    schema: Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]),
    default: null,
    check: nullable(caBundlePathProblem),
    description: 'PEM CA bundle for LDAP TLS (a file under CA_BUNDLE_DIR)',
  },
  group_admin: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Directory group mapped to admin' },
  group_maintainer: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Directory group mapped to maintainer' },
  group_uploader: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Directory group mapped to uploader' },
  group_auditor: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Directory group mapped to auditor' },
  group_reader: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Directory group mapped to reader' },
  smtp_host: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'SMTP server host' },
  smtp_port: { schema: Type.Integer({ minimum: 1, maximum: 65535 }), default: 25, description: 'SMTP server port' },
  smtp_user: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'SMTP user' },
  smtp_password: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, secret: true, boundTo: ['smtp_host', 'smtp_port', 'smtp_tls'], description: 'SMTP password' },
  smtp_from: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Sender address' },
  smtp_tls: { schema: Type.Union([Type.Literal('none'), Type.Literal('starttls'), Type.Literal('tls')]), default: 'starttls', description: 'SMTP transport security' },
  notify_emails: { schema: Type.Array(Type.String({ format: 'email', maxLength: 320 }), { maxItems: 100 }), default: [], description: 'Recipients of notifications' },
  webhook_enabled: { schema: Type.Boolean(), default: false, description: 'Send webhook notifications' },
  webhook_url: { schema: Type.Union([Type.String({ pattern: '^https?://', maxLength: 2000 }), Type.Null()]), default: null, description: 'Webhook endpoint' },
  webhook_secret: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, secret: true, boundTo: ['webhook_url'], description: 'HMAC-SHA256 key for X-Tollgate-Signature' },
  cve_policy: { schema: perSeverity(action), default: { critical: 'review', high: 'review', medium: 'warn', low: 'allow' }, description: 'Action per severity' },
  sla_days: { schema: perSeverity(() => Type.Integer({ minimum: 1, maximum: 3650 })), default: { critical: 7, high: 30, medium: 90, low: 180 }, description: 'Review deadline per severity' },
  kev_action: { schema: Type.Union([Type.Literal('review'), Type.Literal('block')]), default: 'review', description: 'Least action for a CVE in the KEV catalog' },
  vuln_feeds: {
    schema: Type.Array(
      Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), url: Type.String({ pattern: '^(https?|file)://', maxLength: 2000 }), format: Type.Literal('osv') }, { additionalProperties: false }),
      { maxItems: 50 },
    ),
    default: [],
    check: (feeds: Array<{ url: string }>, dirs: AllowedDirs) => feeds.flatMap((feed, i) => problem(feedUrlProblem(feed.url, dirs), [String(i), 'url'])),
    description: 'Vulnerability feeds (OSV zip or JSON; http(s), or file:// under FEEDS_DIR)',
  },
  epss_url: {
    schema: Type.Union([Type.String({ pattern: '^(https?|file)://', maxLength: 2000 }), Type.Null()]),
    default: null,
    check: nullable(feedUrlProblem),
    description: 'EPSS CSV feed (plain or gzip)',
  },
  kev_url: {
    schema: Type.Union([Type.String({ pattern: '^(https?|file)://', maxLength: 2000 }), Type.Null()]),
    default: null,
    check: nullable(feedUrlProblem),
    description: 'KEV catalog JSON feed',
  },
  rpm_signature_policy: {
    schema: Type.Union(RPM_SIGNATURE_POLICIES.map((p) => Type.Literal(p))),
    default: 'replace',
    description: "What admission does with an RPM's own signature: replace it with the repository's, keep it, or refuse unsigned RPMs",
  },
  rpm_trusted_keys: {
    // Keyed by RPM distribution: a misspelt or APT codename would otherwise be stored and ignored.
    schema: Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9.+-]*$', maxLength: 50 }), Type.String({ maxLength: 256 * 1024 }), { maxProperties: 200 }),
    default: {},
    check: (keys: Record<string, string>) =>
      Object.entries(keys).flatMap(([codename, armored]) =>
        problem(findDistribution(codename)?.format !== 'rpm' ? 'not an RPM distribution' : ARMORED_KEY.test(armored) ? null : 'not an armored OpenPGP public key block', [codename])),
    description: 'Per RPM distribution, armored public keys one of which must have signed every upload (none: no upstream signature required)',
  },
  schedule_security_sync: { schema: time(), default: '03:00', description: 'Daily security feed sync (UTC, HH:MM)' },
  schedule_retention: { schema: time(), default: '02:00', description: 'Daily retention run (UTC, HH:MM)' },
  schedule_sla_check: { schema: time(), default: '08:00', description: 'Daily SLA and expiry check (UTC, HH:MM)' },
} satisfies Record<string, SettingDeclaration>;

export type SettingKey = keyof typeof SETTINGS;
export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];
export const SECRET_MASK = '********';
export const isSecretSetting = (key: SettingKey): boolean => (SETTINGS[key] as SettingDeclaration).secret === true;
const declaration = (key: SettingKey): SettingDeclaration => SETTINGS[key];

/** What is wrong with the values of a schema-valid patch, each located as `[key, ...path]`. */
export function settingProblems(patch: Partial<Record<SettingKey, unknown>>, dirs: AllowedDirs): SettingProblem[] {
  return (Object.keys(patch) as SettingKey[]).flatMap((key) => {
    const check = declaration(key).check as ((value: unknown, dirs: AllowedDirs) => SettingProblem[]) | undefined;
    return (check?.(patch[key], dirs) ?? []).map((p) => ({ loc: [key, ...p.loc], msg: p.msg }));
  });
}

/** The value as stored: its declared canonical form. */
export function normaliseSetting(key: SettingKey, value: unknown): unknown {
  const normalise = declaration(key).normalise as ((value: unknown) => unknown) | undefined;
  return normalise ? normalise(value) : value;
}

/**
 * The stored secrets a patch clears: those whose destination (`boundTo`) it changes without
 * supplying the secret again. The mask is not supplying it: it means "keep what is stored".
 */
export function secretsClearedBy(patch: Partial<Record<SettingKey, unknown>>, current: Readonly<Record<SettingKey, unknown>>): SettingKey[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return SETTING_KEYS.filter((secret) => {
    const boundTo = (declaration(secret).boundTo ?? []) as SettingKey[];
    if (boundTo.length === 0 || !current[secret]) return false;
    if (secret in patch && patch[secret] !== SECRET_MASK) return false;
    return boundTo.some((key) => key in patch && !same(normaliseSetting(key, patch[key]), current[key]));
  });
}
