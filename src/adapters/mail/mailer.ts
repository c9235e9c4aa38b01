/**
 * Outgoing e-mail over SMTP with nodemailer. Every network wait is bounded so a
 * silent server cannot hang a request; failures become DomainErrors with a stable code.
 */
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { DomainError } from '../../domain/errors.js';

/** One message; `to` holds bare addresses. */
export interface MailMessage {
  to: string[];
  subject: string;
  text: string;
  html?: string;
}

/** Sends e-mail. Throws DomainError: smtp_not_configured, smtp_unavailable, smtp_auth_failed, smtp_rejected, smtp_error. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  /** Connects (and authenticates, when a user is set) without sending anything. */
  verify(): Promise<void>;
}

export type SmtpTlsMode = 'none' | 'starttls' | 'tls';

/** The SMTP settings keys as stored in the settings table. */
export interface SmtpSettings {
  smtp_host: string | null;
  smtp_port?: number | null;
  smtp_user?: string | null;
  smtp_password?: string | null;
  smtp_from: string | null;
  smtp_tls?: SmtpTlsMode | null;
}

export interface SmtpMailerOptions {
  /** Limit for connect, greeting and every later socket wait (default 10000 ms). */
  timeoutMs?: number;
  /** Extra trust anchors (PEM) for a server with a private CA; the system store is used otherwise. */
  ca?: string | Buffer;
}

const DEFAULT_PORTS: Record<SmtpTlsMode, number> = { none: 25, starttls: 587, tls: 465 };
// A bare address: no display name, no separators, nothing that could start a new header.
const ADDRESS = /^[^\s@<>,;"'()\\]+@[^\s@<>,;"'()\\]+$/;

/** Builds a Mailer from the SMTP settings; throws smtp_not_configured when host or sender is missing. */
export function createSmtpMailer(settings: SmtpSettings, options: SmtpMailerOptions = {}): Mailer {
  const host = settings.smtp_host?.trim();
  const from = settings.smtp_from?.trim();
  if (!host || !from) {
    throw new DomainError('invalid', 'smtp_not_configured', 'SMTP is not configured: smtp_host and smtp_from are required');
  }
  const mode: SmtpTlsMode = settings.smtp_tls ?? 'starttls';
  const port = settings.smtp_port ?? DEFAULT_PORTS[mode];
  const timeoutMs = options.timeoutMs ?? 10_000;
  const user = settings.smtp_user?.trim();

  const transportOptions: SMTPTransport.Options = {
    host,
    port,
    // none: plain text, never upgrade; starttls: refuse to continue without the upgrade; tls: TLS from the first byte.
    secure: mode === 'tls',
    ignoreTLS: mode === 'none',
    requireTLS: mode === 'starttls',
    tls: { rejectUnauthorized: true, ...(options.ca ? { ca: options.ca } : {}) },
    // No AUTH without a password: smtp_password is cleared when the destination changes, and an
    // empty-password login would still hand the user name to a server it was never meant for.
    auth: user && settings.smtp_password ? { user, pass: settings.smtp_password } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    // Messages are built from our own text only; never let content pull in files or URLs.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  // nodemailer is loaded at the first message or check, not at start-up: most services never send e-mail.
  let transport: Transporter<SMTPTransport.SentMessageInfo> | undefined;
  const transporter = async () => (transport ??= (await import('nodemailer')).createTransport(transportOptions));
  const where = `${host}:${port} (${mode})`;

  return {
    async send(message: MailMessage): Promise<void> {
      const to = message.to.map((address) => address.trim()).filter((address) => address !== '');
      if (to.length === 0) throw new DomainError('invalid', 'smtp_no_recipients', 'no e-mail recipient given');
      const bad = to.find((address) => !ADDRESS.test(address));
      if (bad !== undefined) throw new DomainError('invalid', 'smtp_bad_recipient', `not an e-mail address: ${bad.slice(0, 100)}`);
      const smtp = await transporter();
      try {
        await smtp.sendMail({
          from,
          to,
          subject: message.subject.replace(/[\r\n]+/g, ' '),
          text: message.text,
          ...(message.html !== undefined ? { html: message.html } : {}),
        });
      } catch (err) {
        throw toDomainError(err, where);
      }
    },
    async verify(): Promise<void> {
      const smtp = await transporter();
      try {
        await smtp.verify();
      } catch (err) {
        throw toDomainError(err, where);
      }
    },
  };
}

/** nodemailer errors carry a `code` (EAUTH, ECONNECTION, ETIMEDOUT, EENVELOPE…); keep the message short. */
function toDomainError(err: unknown, where: string): DomainError {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
  const message = err instanceof Error ? err.message.slice(0, 300) : String(err);
  switch (code) {
    case 'EAUTH':
    case 'ENOAUTH':
      return new DomainError('unavailable', 'smtp_auth_failed', `SMTP server ${where} refused the login: ${message}`);
    case 'EENVELOPE':
    case 'EMESSAGE':
      return new DomainError('unavailable', 'smtp_rejected', `SMTP server ${where} refused the message: ${message}`);
    case 'ECONNECTION':
    case 'ETIMEDOUT':
    case 'ESOCKET':
    case 'EDNS':
    case 'ETLS':
      return new DomainError('unavailable', 'smtp_unavailable', `cannot talk to SMTP server ${where}: ${message}`);
    default:
      return new DomainError('unavailable', 'smtp_error', `SMTP error with ${where}: ${message}`);
  }
}
