/**
 * Settings actions that try the configured integrations without changing anything: test webhook,
 * test LDAP, test e-mail (API.md "Settings"). They are not audited: nothing is changed. All three
 * are Enterprise features (DECISIONS §10: LDAP, notifications "and their tests").
 */
import { Type } from 'typebox';
import { testLdapConnection } from '../../adapters/ldap/index.js';
import { ldapConfigFrom } from '../../services/directory.js';
import { smtpConfigured } from '../../services/notifications.js';
import type { AppContext } from '../../services/context.js';
import type { App } from '../types.js';
import { principalOf } from '../auth-hook.js';
import { requireEnterprise } from '../edition.js';
import { HttpError, unprocessable } from '../errors.js';
import { ErrorBody, errorResponses } from '../schemas.js';

const WebhookTestOut = Type.Object({
  ok: Type.Boolean(),
  /** HTTP status of the last attempt; null when the receiver never answered. */
  status: Type.Union([Type.Integer(), Type.Null()]),
  attempts: Type.Integer(),
  error: Type.Optional(Type.String()),
});

const CheckOut = Type.Object({ ok: Type.Boolean(), detail: Type.String() });

const responses = { ...errorResponses, 402: ErrorBody };

export async function settingsActionRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post('/settings/test-webhook', {
    schema: {
      tags: ['settings'],
      summary: 'Send a signed `test` event to the configured webhook now (200 with ok=false when delivery fails)',
      response: { 200: WebhookTestOut, ...responses },
    },
  }, async (request) => {
    requireEnterprise(ctx, 'webhook notifications');
    const actor = principalOf(request).user;
    const result = await ctx.notifier.testWebhook({ message: 'Tollgate webhook test', requested_by: actor.username });
    if (result === 'not_configured') throw unprocessable('webhook_not_configured', 'Set webhook_url first');
    return {
      ok: result.ok,
      status: result.status ?? null,
      attempts: result.attempts,
      ...(result.error !== undefined ? { error: result.error } : {}),
    };
  });

  app.post('/settings/test-ldap', {
    schema: {
      tags: ['settings'],
      summary: 'Connect and bind to the directory with the current LDAP settings (200 with ok=false when it fails)',
      response: { 200: CheckOut, ...responses },
    },
  }, async () => {
    requireEnterprise(ctx, 'ldap');
    const config = ldapConfigFrom(await ctx.settings.all());
    if (!config) throw unprocessable('ldap_not_configured', 'Set ldap_url and ldap_base_dn first');
    return testLdapConnection(config);
  });

  app.post('/settings/test-email', {
    schema: {
      tags: ['settings'],
      summary: 'Send a test e-mail to notify_emails, or to your own address when that list is empty',
      response: { 200: CheckOut, ...responses },
    },
  }, async (request) => {
    requireEnterprise(ctx, 'e-mail notifications');
    const actor = principalOf(request).user;
    const settings = await ctx.settings.all();
    if (!smtpConfigured(settings)) throw unprocessable('smtp_not_configured', 'Set smtp_host and smtp_from first');
    const to = settings.notify_emails.length > 0 ? settings.notify_emails : actor.email ? [actor.email] : [];
    if (to.length === 0) throw unprocessable('no_email_recipient', 'Set notify_emails or an e-mail address on your account');
    try {
      const outcome = await ctx.mail.send(to, 'Tollgate test e-mail', `This is a test e-mail sent by ${actor.username} from the Tollgate settings.`);
      if (outcome === 'not_configured') throw unprocessable('smtp_not_configured', 'Set smtp_host and smtp_from first');
      return { ok: true, detail: `sent to ${to.join(', ')}` };
    } catch (err) {
      if (err instanceof HttpError) throw err;
      // The mailer's message names the server and its reply, never the SMTP password.
      return { ok: false, detail: err instanceof Error ? err.message : String(err) };
    }
  });
}
