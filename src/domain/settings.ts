import { Type, type TSchema } from 'typebox';

/**
 * Every runtime setting, declared once: its schema (type and bounds), default, and whether it is
 * a secret (encrypted at rest, masked in answers). GET/PATCH /settings, the services and the
 * README table all read this. Later capabilities add their keys here.
 */
export interface SettingDeclaration {
  schema: TSchema;
  default: unknown;
  secret?: boolean;
  description: string;
}

const time = () => Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' });
const action = () => Type.Union([Type.Literal('block'), Type.Literal('review'), Type.Literal('warn'), Type.Literal('allow')]);
const perSeverity = <T extends TSchema>(item: () => T) =>
  Type.Object({ critical: item(), high: item(), medium: item(), low: item() }, { additionalProperties: false });

export const SETTINGS = {
  app_url: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Public URL of the service, used in reset links and install commands (defaults to APP_URL)' },
  retention_days: { schema: Type.Integer({ minimum: 1, maximum: 36500 }), default: 90, description: 'Audit log retention in days' },
  rate_limits: {
    schema: Type.Record(Type.String({ pattern: '^[a-z_]+$' }), Type.Integer({ minimum: 0, maximum: 100000 })),
    default: {},
    description: 'Overrides of rate limits per limit name (requests per minute, 0 = off)',
  },
  decide_min_role: { schema: Type.Union([Type.Literal('admin'), Type.Literal('maintainer')]), default: 'admin', description: 'Lowest role allowed to decide on packages in review' },
  ldap_enabled: { schema: Type.Boolean(), default: false, description: 'Try LDAP for logins not found locally' },
  ldap_url: { schema: Type.Union([Type.String({ pattern: '^ldaps?://', maxLength: 500 }), Type.Null()]), default: null, description: 'ldap:// or ldaps:// URL' },
  ldap_starttls: { schema: Type.Boolean(), default: false, description: 'Upgrade ldap:// with STARTTLS' },
  ldap_bind_dn: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Service account DN for user searches' },
  ldap_bind_password: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, secret: true, description: 'Service account password' },
  ldap_base_dn: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Search base for users and groups' },
  ldap_user_attribute: { schema: Type.Union([Type.Literal('uid'), Type.Literal('sAMAccountName')]), default: 'uid', description: 'Directory attribute holding the login name' },
  ldap_verify_cert: { schema: Type.Boolean(), default: true, description: 'Verify the directory TLS certificate' },
  ca_bundle_path: { schema: Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]), default: null, description: 'PEM CA bundle for LDAP TLS' },
  group_admin: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Directory group mapped to admin' },
  group_maintainer: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Directory group mapped to maintainer' },
  group_uploader: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Directory group mapped to uploader' },
  group_auditor: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Directory group mapped to auditor' },
  group_reader: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Directory group mapped to reader' },
  smtp_host: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'SMTP server host' },
  smtp_port: { schema: Type.Integer({ minimum: 1, maximum: 65535 }), default: 25, description: 'SMTP server port' },
  smtp_user: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'SMTP user' },
  smtp_password: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, secret: true, description: 'SMTP password' },
  smtp_from: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, description: 'Sender address' },
  smtp_tls: { schema: Type.Union([Type.Literal('none'), Type.Literal('starttls'), Type.Literal('tls')]), default: 'starttls', description: 'SMTP transport security' },
  notify_emails: { schema: Type.Array(Type.String({ format: 'email', maxLength: 320 }), { maxItems: 100 }), default: [], description: 'Recipients of notifications' },
  webhook_enabled: { schema: Type.Boolean(), default: false, description: 'Send webhook notifications' },
  webhook_url: { schema: Type.Union([Type.String({ pattern: '^https?://', maxLength: 2000 }), Type.Null()]), default: null, description: 'Webhook endpoint' },
  webhook_secret: { schema: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), default: null, secret: true, description: 'HMAC-SHA256 key for X-Tollgate-Signature' },
  cve_policy: { schema: perSeverity(action), default: { critical: 'review', high: 'review', medium: 'warn', low: 'allow' }, description: 'Action per severity' },
  sla_days: { schema: perSeverity(() => Type.Integer({ minimum: 1, maximum: 3650 })), default: { critical: 7, high: 30, medium: 90, low: 180 }, description: 'Review deadline per severity' },
  kev_action: { schema: Type.Union([Type.Literal('review'), Type.Literal('block')]), default: 'review', description: 'Least action for a CVE in the KEV catalog' },
  vuln_feeds: {
    schema: Type.Array(
      Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), url: Type.String({ pattern: '^(https?|file)://', maxLength: 2000 }), format: Type.Literal('osv') }, { additionalProperties: false }),
      { maxItems: 50 },
    ),
    default: [],
    description: 'Vulnerability feeds (OSV zip or JSON)',
  },
  epss_url: { schema: Type.Union([Type.String({ pattern: '^(https?|file)://', maxLength: 2000 }), Type.Null()]), default: null, description: 'EPSS CSV feed (plain or gzip)' },
  kev_url: { schema: Type.Union([Type.String({ pattern: '^(https?|file)://', maxLength: 2000 }), Type.Null()]), default: null, description: 'KEV catalog JSON feed' },
  schedule_security_sync: { schema: time(), default: '03:00', description: 'Daily security feed sync (UTC, HH:MM)' },
  schedule_retention: { schema: time(), default: '02:00', description: 'Daily retention run (UTC, HH:MM)' },
  schedule_sla_check: { schema: time(), default: '08:00', description: 'Daily SLA and expiry check (UTC, HH:MM)' },
} satisfies Record<string, SettingDeclaration>;

export type SettingKey = keyof typeof SETTINGS;
export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];
export const SECRET_MASK = '********';
export const isSecretSetting = (key: SettingKey): boolean => (SETTINGS[key] as SettingDeclaration).secret === true;
