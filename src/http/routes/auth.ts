import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { generateSecret, generateURI } from 'otplib';
import { Type } from 'typebox';
import { ROLES } from '../../domain/roles.js';
import { sha256Hex } from '../../services/api-tokens.js';
import type { LoginOutcome } from '../../services/auth.js';
import type { App } from '../types.js';
import type { AppContext } from '../../services/context.js';
import { isoUtc } from '../../services/time.js';
import { principalOf } from '../auth-hook.js';
import { badRequest, HttpError, tooManyRequests, unauthorized } from '../errors.js';
import { requireEnterprise } from '../edition.js';
import { errorResponses, StatusOut, UserOut } from '../schemas.js';
import { publicUser } from '../../services/users.js';

const RESET_TTL_MS = 30 * 60_000;

const TokenOut = Type.Object({
  access_token: Type.String(),
  token_type: Type.String(),
  expires_in: Type.Integer(),
  mfa_required: Type.Optional(Type.Boolean()),
  mfa_token: Type.Optional(Type.String()),
});

const ROLE_DESCRIPTIONS: Record<(typeof ROLES)[number], string> = {
  admin: 'Everything, including users, settings, signing keys and security decisions',
  maintainer: 'Upload, delete, promote, rescan, quarantine, sync; review queue, audit log and SBOM',
  uploader: 'Upload and import packages; own API tokens',
  auditor: 'Read everything, the review queue, the audit log and SBOM exports',
  reader: 'Read packages, distributions and vulnerabilities (alias: viewer)',
};

export async function authRoutes(app: App, ctx: AppContext): Promise<void> {
  const loginAudit = (request: FastifyRequest, user: string, result: 'SUCCESS' | 'FAILURE', detail: string) =>
    ctx.audit.record({ action: 'LOGIN', user, result, detail, ip: request.ip });

  async function answerLogin(request: FastifyRequest, username: string, outcome: LoginOutcome) {
    switch (outcome.kind) {
      case 'locked':
        await loginAudit(request, username, 'FAILURE', 'account locked after repeated failures');
        throw tooManyRequests(outcome.retryAfter, 'Too many failed logins; the account is locked for a while', 'account_locked');
      case 'failed':
        await loginAudit(request, username, 'FAILURE', outcome.reason);
        if (outcome.reason === 'account_disabled') throw unauthorized('This account is deactivated', 'account_disabled');
        throw unauthorized('Incorrect username, password or code', 'invalid_credentials');
      case 'mfa_required':
        return { access_token: '', token_type: 'bearer', expires_in: 0, mfa_required: true, mfa_token: outcome.mfaToken };
      case 'token':
        await loginAudit(request, outcome.user.username, 'SUCCESS', `login via ${outcome.user.source}`);
        return { access_token: outcome.accessToken, token_type: 'bearer', expires_in: outcome.expiresIn };
    }
  }

  app.post('/auth/token', {
    schema: {
      tags: ['auth'],
      summary: 'Log in (JSON or OAuth2 form encoding)',
      body: Type.Object(
        {
          username: Type.String({ minLength: 1, maxLength: 200 }),
          password: Type.String({ maxLength: 1000 }),
          otp: Type.Optional(Type.String({ maxLength: 12 })),
        },
        // OAuth2 password-grant clients also send grant_type, scope, client_id…
        { additionalProperties: true },
      ),
      response: { 200: TokenOut, ...errorResponses },
    },
  }, async (request) => {
    const { username, password, otp } = request.body as { username: string; password: string; otp?: string };
    return answerLogin(request, username, await ctx.auth.login(username, password, otp));
  });

  app.post('/auth/mfa/verify', {
    schema: {
      tags: ['auth'],
      summary: 'Second step of a login with MFA',
      body: Type.Object({ mfa_token: Type.String({ minLength: 1, maxLength: 2000 }), code: Type.String({ pattern: '^[0-9]{6}$' }) }, { additionalProperties: false }),
      response: { 200: TokenOut, ...errorResponses },
    },
  }, async (request) => {
    requireEnterprise(ctx, 'mfa');
    const { mfa_token, code } = request.body;
    return answerLogin(request, 'mfa', await ctx.auth.completeMfa(mfa_token, code));
  });

  app.get('/auth/me', {
    schema: { tags: ['auth'], summary: 'The calling account', response: { 200: UserOut, ...errorResponses } },
  }, async (request) => publicUser(principalOf(request).user));

  app.get('/auth/roles', {
    schema: {
      tags: ['auth'],
      summary: 'The roles',
      response: { 200: Type.Array(Type.Object({ name: Type.String(), aliases: Type.Array(Type.String()), description: Type.String() })) },
    },
  }, async () => ROLES.map((name) => ({ name, aliases: name === 'reader' ? ['viewer'] : [], description: ROLE_DESCRIPTIONS[name] })));

  app.post('/auth/change-password', {
    schema: {
      tags: ['auth'],
      summary: 'Change your own password (ends your other sessions)',
      body: Type.Object({ current_password: Type.String({ maxLength: 1000 }), new_password: Type.String({ maxLength: 1000 }) }, { additionalProperties: false }),
      response: { 200: StatusOut, ...errorResponses },
    },
  }, async (request) => {
    const { user } = principalOf(request);
    const { current_password, new_password } = request.body;
    if (user.source !== 'local') throw badRequest('directory_account', 'This account is managed by the directory (LDAP)');
    if (!(await ctx.users.checkPassword(user, current_password))) {
      await ctx.audit.record({ action: 'PASSWORD_CHANGE', user: user.username, result: 'FAILURE', detail: 'wrong current password', ip: request.ip });
      throw badRequest('invalid_current_password', 'The current password is not correct');
    }
    await ctx.users.setPassword(user, new_password);
    await ctx.audit.record({ action: 'PASSWORD_CHANGE', user: user.username, result: 'SUCCESS', ip: request.ip });
    return { status: 'ok', detail: 'Password changed; earlier sessions are signed out' };
  });

  app.post('/auth/forgot-password', {
    schema: {
      tags: ['auth'],
      summary: 'Send a password reset link',
      body: Type.Object({ email: Type.String({ format: 'email', maxLength: 320 }) }, { additionalProperties: false }),
      response: { 202: StatusOut, ...errorResponses },
    },
  }, async (request, reply) => {
    const { email } = request.body;
    const user = await ctx.db.selectFrom('users').selectAll().where('email', '=', email).where('is_active', '=', 1).executeTakeFirst();
    if (user && user.source === 'local') {
      const token = randomBytes(32).toString('base64url');
      await ctx.db.insertInto('password_reset_tokens').values({
        token_hash: sha256Hex(token),
        user_id: user.id,
        expires_at: isoUtc(new Date(Date.now() + RESET_TTL_MS)),
        used_at: null,
        created_at: isoUtc(),
      }).execute();
      const base = (await ctx.settings.get('app_url')) ?? ctx.config.appUrl;
      const link = `${base}/reset-password?token=${token}`;
      // Sent in the background: the answer must not reveal, by its timing, whether the address exists.
      void ctx.mail
        .send([email], 'Tollgate password reset', `A password reset was requested for ${user.username}.\n\nOpen ${link} within 30 minutes to choose a new password.\nIf you did not ask for it, ignore this message.`)
        .catch((error: unknown) => request.log.warn({ err: error }, 'password reset e-mail failed'));
    }
    return reply.status(202).send({ status: 'accepted', detail: 'If the address belongs to an account, a reset link has been sent' });
  });

  app.post('/auth/reset-password', {
    schema: {
      tags: ['auth'],
      summary: 'Set a new password with a one-time reset token',
      body: Type.Object({ token: Type.String({ minLength: 10, maxLength: 200 }), new_password: Type.String({ maxLength: 1000 }) }, { additionalProperties: false }),
      response: { 200: StatusOut, ...errorResponses },
    },
  }, async (request) => {
    const { token, new_password } = request.body;
    const row = await ctx.db.selectFrom('password_reset_tokens').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
    if (!row || row.used_at || new Date(row.expires_at).getTime() <= Date.now()) {
      throw badRequest('invalid_reset_token', 'The reset link is invalid, used or expired');
    }
    const user = await ctx.users.byId(row.user_id);
    if (!user) throw badRequest('invalid_reset_token', 'The reset link is invalid, used or expired');
    await ctx.users.setPassword(user, new_password);
    await ctx.db.updateTable('password_reset_tokens').set({ used_at: isoUtc() }).where('token_hash', '=', row.token_hash).execute();
    await ctx.audit.record({ action: 'PASSWORD_RESET', user: user.username, result: 'SUCCESS', detail: 'self-service reset link', ip: request.ip });
    return { status: 'ok' };
  });

  app.post('/auth/mfa/setup', {
    schema: {
      tags: ['auth'],
      summary: 'Start enrolling a TOTP authenticator',
      response: { 200: Type.Object({ secret: Type.String(), otpauth_url: Type.String() }), ...errorResponses },
    },
  }, async (request) => {
    requireEnterprise(ctx, 'mfa');
    const { user } = principalOf(request);
    if (user.mfa_enabled) throw new HttpError(409, 'mfa_already_enabled', 'MFA is already enabled; disable it first');
    const secret = generateSecret();
    await ctx.users.setMfa(user, ctx.box.seal(secret), false);
    return { secret, otpauth_url: generateURI({ secret, label: user.username, issuer: 'Tollgate' }) };
  });

  const CodeBody = Type.Object({ code: Type.String({ pattern: '^[0-9]{6}$' }) }, { additionalProperties: false });

  app.post('/auth/mfa/enable', {
    schema: { tags: ['auth'], summary: 'Confirm enrolment with a current code', body: CodeBody, response: { 200: StatusOut, ...errorResponses } },
  }, async (request) => {
    requireEnterprise(ctx, 'mfa');
    const { user } = principalOf(request);
    if (!user.mfa_secret) throw badRequest('mfa_not_set_up', 'Call /auth/mfa/setup first');
    if (!(await ctx.auth.checkTotp(user, request.body.code))) throw badRequest('invalid_code', 'The code is not valid');
    await ctx.users.setMfa(user, user.mfa_secret, true);
    await ctx.audit.record({ action: 'MFA_CHANGE', user: user.username, result: 'SUCCESS', detail: 'enabled', ip: request.ip });
    return { status: 'ok' };
  });

  app.post('/auth/mfa/disable', {
    schema: { tags: ['auth'], summary: 'Turn MFA off with a current code', body: CodeBody, response: { 200: StatusOut, ...errorResponses } },
  }, async (request) => {
    requireEnterprise(ctx, 'mfa');
    const { user } = principalOf(request);
    if (!user.mfa_enabled) throw badRequest('mfa_not_enabled', 'MFA is not enabled');
    if (!(await ctx.auth.checkTotp(user, request.body.code))) throw badRequest('invalid_code', 'The code is not valid');
    await ctx.users.setMfa(user, null, false);
    await ctx.audit.record({ action: 'MFA_CHANGE', user: user.username, result: 'SUCCESS', detail: 'disabled', ip: request.ip });
    return { status: 'ok' };
  });
}
