/**
 * Settings actions that try the configured integrations without changing anything: test webhook,
 * test LDAP, test e-mail. The service audits each attempt (SETTINGS_TEST). All three are
 * Enterprise features, as LDAP and notifications themselves are.
 */
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../services/context.js';
import type { CheckActor } from '../../services/integration-checks.js';
import type { App } from '../types.js';
import { principalOf } from '../auth-hook.js';
import { requireEnterprise } from '../edition.js';
import { answering, ErrorBody, errorResponses } from '../schemas.js';

const WebhookTestOut = Type.Object({
  ok: Type.Boolean(),
  /** HTTP status of the last attempt; null when the receiver never answered. */
  status: Type.Union([Type.Integer(), Type.Null()]),
  attempts: Type.Integer(),
  error: Type.Optional(Type.String()),
});

const CheckOut = answering<Awaited<ReturnType<AppContext['checks']['ldap']>>>()(Type.Object({ ok: Type.Boolean(), detail: Type.String() }));

const responses = { ...errorResponses, 402: ErrorBody };

function actorOf(request: FastifyRequest): CheckActor {
  const user = principalOf(request).user;
  return { username: user.username, email: user.email, ip: request.ip };
}

export async function settingsActionRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post('/settings/test-webhook', {
    schema: {
      tags: ['settings'],
      summary: 'Send a signed `test` event to the configured webhook now (200 with ok=false when delivery fails); audit SETTINGS_TEST',
      response: { 200: WebhookTestOut, ...responses },
    },
  }, async (request) => {
    requireEnterprise(ctx, 'webhook notifications');
    const result = await ctx.checks.webhook(actorOf(request));
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
      summary: 'Connect and bind to the directory with the current LDAP settings (200 with ok=false when it fails); audit SETTINGS_TEST',
      response: { 200: CheckOut, ...responses },
    },
  }, async (request) => {
    requireEnterprise(ctx, 'ldap');
    return ctx.checks.ldap(actorOf(request));
  });

  app.post('/settings/test-email', {
    schema: {
      tags: ['settings'],
      summary: 'Send a test e-mail to notify_emails, or to your own address when that list is empty; audit SETTINGS_TEST',
      response: { 200: CheckOut, ...responses },
    },
  }, async (request) => {
    requireEnterprise(ctx, 'e-mail notifications');
    return ctx.checks.email(actorOf(request));
  });
}
