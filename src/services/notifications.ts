/**
 * Notifications: a signed webhook and an e-mail to notify_emails, both sent in the
 * background so the request that caused them is never slowed down or failed by a receiver.
 * Also the settings-backed OutboundMail used for password reset mails and test mails.
 */
import type { Logger } from 'pino';
import { createSmtpMailer, type SmtpMailerOptions } from '../adapters/mail/index.js';
import type { Metrics } from '../adapters/metrics/metrics.js';
import { sendWebhook, type WebhookEvent, type WebhookResult } from '../adapters/webhook/index.js';
import type { SettingsSnapshot } from './settings.js';

/** The events Tollgate notifies about (the webhook `event` field). */
export type NotificationEvent = WebhookEvent;

/** The e-mail form of a notification. */
export interface NotificationText {
  subject: string;
  text: string;
}

interface SettingsSource {
  all(): Promise<SettingsSnapshot>;
}

/** True when smtp_host and smtp_from are both set: the minimum to send anything. */
export function smtpConfigured(settings: SettingsSnapshot): boolean {
  return Boolean(settings.smtp_host?.trim() && settings.smtp_from?.trim());
}

/** Sends e-mail through the SMTP settings; says when SMTP is not configured instead of pretending. */
export interface OutboundMail {
  send(to: string[], subject: string, text: string): Promise<'sent' | 'not_configured'>;
}

/** OutboundMail that reads the SMTP settings at every send, so a settings change applies at once. */
export function createSettingsMail(settings: SettingsSource, options: SmtpMailerOptions = {}): OutboundMail {
  return {
    async send(to, subject, text) {
      const s = await settings.all();
      if (!smtpConfigured(s)) return 'not_configured';
      const mailer = createSmtpMailer(
        {
          smtp_host: s.smtp_host,
          smtp_port: s.smtp_port,
          smtp_user: s.smtp_user,
          smtp_password: s.smtp_password,
          smtp_from: s.smtp_from,
          smtp_tls: s.smtp_tls,
        },
        options,
      );
      await mailer.send({ to, subject, text });
      return 'sent';
    },
  };
}

export interface NotifierDeps {
  settings: SettingsSource;
  mail: OutboundMail;
  metrics: Pick<Metrics, 'notificationFailures'>;
  log: Logger;
  edition: 'community' | 'enterprise';
  /** Webhook delivery tuning (defaults: 5 s timeout, 3 tries with back-off). */
  webhook?: { timeoutMs?: number; tries?: number; backoffMs?: number };
}

/** Where a webhook goes; only its origin is ever logged, since URLs often carry a token in the path. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid URL';
  }
}

/** Sends notifications in the background; failures are logged and counted, never thrown. */
export class Notifier {
  private readonly inflight = new Set<Promise<void>>();

  constructor(private readonly deps: NotifierDeps) {}

  /**
   * Queues the webhook and e-mail for `event` and returns at once. The Community edition sends
   * nothing: notifications are an Enterprise feature.
   */
  notify(event: NotificationEvent, data: Record<string, unknown>, message: NotificationText): void {
    if (this.deps.edition !== 'enterprise') return;
    const task = this.deliver(event, data, message).catch((err: unknown) => {
      // deliver() handles its own failures; this only guards against a bug or a settings read error.
      this.deps.log.error({ err, event }, 'notification could not be prepared');
    });
    this.inflight.add(task);
    void task.finally(() => this.inflight.delete(task));
  }

  /** Resolves when every queued delivery has finished, or after `timeoutMs` (tests, shutdown). */
  async idle(timeoutMs?: number): Promise<void> {
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    while (this.inflight.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      const all = Promise.allSettled([...this.inflight]);
      if (left === Infinity) {
        await all;
      } else {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
        clearTimeout(timer);
      }
    }
  }

  /**
   * Sends the `test` event now and answers the delivery result (settings "test webhook"), whether
   * or not webhook_enabled is on; 'not_configured' when no URL is set. Not counted as a failure.
   */
  async testWebhook(data: Record<string, unknown>): Promise<WebhookResult | 'not_configured'> {
    const settings = await this.deps.settings.all();
    if (!settings.webhook_url) return 'not_configured';
    return sendWebhook({ url: settings.webhook_url, secret: settings.webhook_secret, event: 'test', data, ...this.deps.webhook });
  }

  private async deliver(event: NotificationEvent, data: Record<string, unknown>, message: NotificationText): Promise<void> {
    const settings = await this.deps.settings.all();
    const jobs: Array<Promise<void>> = [];
    if (settings.webhook_enabled && settings.webhook_url) jobs.push(this.deliverWebhook(settings.webhook_url, settings.webhook_secret, event, data));
    if (settings.notify_emails.length > 0) jobs.push(this.deliverMail(settings.notify_emails, event, message));
    await Promise.all(jobs);
  }

  private async deliverWebhook(url: string, secret: string | null, event: NotificationEvent, data: Record<string, unknown>): Promise<void> {
    const result = await sendWebhook({ url, secret, event, data, ...this.deps.webhook });
    const where = originOf(url);
    if (result.ok) {
      this.deps.log.debug({ event, receiver: where, attempts: result.attempts }, 'webhook delivered');
      return;
    }
    this.deps.metrics.notificationFailures.inc({ channel: 'webhook' });
    this.deps.log.warn(
      { event, receiver: where, status: result.status, attempts: result.attempts, error: result.error, delivery: result.deliveryId },
      'webhook notification failed',
    );
  }

  private async deliverMail(to: string[], event: NotificationEvent, message: NotificationText): Promise<void> {
    try {
      const outcome = await this.deps.mail.send(to, message.subject, message.text);
      if (outcome === 'not_configured') this.deps.log.warn({ event }, 'notify_emails is set but SMTP is not configured; no e-mail sent');
    } catch (err) {
      this.deps.metrics.notificationFailures.inc({ channel: 'email' });
      // Mailer errors name the server and its reply, never the SMTP password.
      const code = typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
      this.deps.log.warn({ event, code, error: err instanceof Error ? err.message : String(err) }, 'e-mail notification failed');
    }
  }
}
