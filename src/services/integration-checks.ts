/**
 * The settings "test" actions: send a test webhook, bind to the directory, send a test e-mail,
 * with the settings as stored. Each attempt is audited as SETTINGS_TEST: it sends a stored
 * credential to a host, so who did it, when, to which host and with what result belongs in the
 * trail. The detail is JSON naming the check and the target (scheme,
 * host and port only: paths can carry tokens), never a secret. A check that cannot start because
 * nothing is configured answers 422 and is not audited: nothing was sent anywhere.
 */
import type { AuditLog } from '../adapters/audit/audit-log.js';
import { testLdapConnection, type LdapOptions } from '../adapters/ldap/index.js';
import type { WebhookResult } from '../adapters/webhook/index.js';
import { DomainError } from '../domain/errors.js';
import type { OutboundMail } from './notifications.js';
import { ldapConfigFrom } from './directory.js';
import { smtpConfigured, type Notifier } from './notifications.js';
import type { SettingsSnapshot } from './settings.js';

export interface CheckActor {
  username: string;
  email: string | null;
  ip?: string | null;
}

export interface IntegrationCheckDeps {
  settings: { all(): Promise<SettingsSnapshot> };
  notifier: Pick<Notifier, 'testWebhook'>;
  mail: OutboundMail;
  audit: Pick<AuditLog, 'record'>;
  /** Options of the directory connection (CA_BUNDLE_DIR, timeouts), as for logins. */
  ldap: LdapOptions;
}

const notConfigured = (code: string, detail: string) => new DomainError('invalid', code, detail);

/** scheme://host:port of a URL, or a placeholder when it does not parse. */
function origin(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'invalid URL';
  }
}

export class IntegrationChecks {
  constructor(private readonly deps: IntegrationCheckDeps) {}

  /** Sends the signed `test` event now, whether or not webhook_enabled is on. */
  async webhook(actor: CheckActor): Promise<WebhookResult> {
    const settings = await this.deps.settings.all();
    const result = await this.deps.notifier.testWebhook({ message: 'Tollgate webhook test', requested_by: actor.username });
    if (result === 'not_configured') throw notConfigured('webhook_not_configured', 'Set webhook_url first');
    await this.record(actor, result.ok, { check: 'webhook', target: origin(settings.webhook_url ?? ''), status: result.status ?? null });
    return result;
  }

  /** Connects and binds with the service account. */
  async ldap(actor: CheckActor): Promise<{ ok: boolean; detail: string }> {
    const config = ldapConfigFrom(await this.deps.settings.all());
    if (!config) throw notConfigured('ldap_not_configured', 'Set ldap_url and ldap_base_dn first');
    const result = await testLdapConnection(config, this.deps.ldap);
    await this.record(actor, result.ok, { check: 'ldap', target: origin(config.ldap_url) });
    return result;
  }

  /** Mails notify_emails, or the caller's own address when that list is empty. */
  async email(actor: CheckActor): Promise<{ ok: boolean; detail: string }> {
    const settings = await this.deps.settings.all();
    if (!smtpConfigured(settings)) throw notConfigured('smtp_not_configured', 'Set smtp_host and smtp_from first');
    const to = settings.notify_emails.length > 0 ? settings.notify_emails : actor.email ? [actor.email] : [];
    if (to.length === 0) throw notConfigured('no_email_recipient', 'Set notify_emails or an e-mail address on your account');
    let result: { ok: boolean; detail: string };
    try {
      const outcome = await this.deps.mail.send(to, 'Tollgate test e-mail', `This is a test e-mail sent by ${actor.username} from the Tollgate settings.`);
      if (outcome === 'not_configured') throw notConfigured('smtp_not_configured', 'Set smtp_host and smtp_from first');
      result = { ok: true, detail: `sent to ${to.join(', ')}` };
    } catch (err) {
      if (err instanceof DomainError && err.code === 'smtp_not_configured') throw err;
      // The mailer's message names the server and its reply, never the SMTP password.
      result = { ok: false, detail: err instanceof Error ? err.message : String(err) };
    }
    const target = `${settings.smtp_host?.trim()}:${settings.smtp_port}`;
    await this.record(actor, result.ok, { check: 'email', target, tls: settings.smtp_tls, recipients: to.length });
    return result;
  }

  private async record(actor: CheckActor, ok: boolean, detail: Record<string, unknown>): Promise<void> {
    await this.deps.audit.record({
      action: 'SETTINGS_TEST', user: actor.username, result: ok ? 'SUCCESS' : 'FAILURE', detail: JSON.stringify(detail), ip: actor.ip ?? null,
    });
  }
}
