/** Mail adapter: the Mailer interface and its SMTP implementation. */
export {
  createSmtpMailer,
  type MailMessage,
  type Mailer,
  type SmtpMailerOptions,
  type SmtpSettings,
  type SmtpTlsMode,
} from './mailer.js';
