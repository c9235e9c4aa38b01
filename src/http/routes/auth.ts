import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ROLES } from '../../domain/roles.js';
import { canonicalUsername } from '../../domain/usernames.js';
import type { AccountResult, Refusal } from '../../services/account-security.js';
import type { LoginOutcome } from '../../services/auth.js';
import type { App } from '../types.js';
import type { AppContext } from '../../services/context.js';
import { principalOf, requireInteractiveSession } from '../auth-hook.js';
import { badRequest, HttpError, tooManyRequests, unprocessable } from '../errors.js';
import { answerLogin } from '../login-answer.js';
import { requireEnterprise } from '../edition.js';
import { errorResponses, StatusOut, UserOut } from '../schemas.js';
import { publicUser } from '../../services/users.js';

const TokenOut = Type.Object({
  access_token: Type.String(),
  token_type: Type.String(),
  expires_in: Type.Integer(),
  mfa_required: Type.Optional(Type.Boolean()),
  mfa_token: Type.Optional(Type.String()),
});

/** The answer to each refused account change (src/services/account-security.ts). */
function refusalError(refusal: Refusal): HttpError {
  switch (refusal.code) {
    case 'account_locked':
      return tooManyRequests(refusal.retryAfter, 'Too many failed attempts; the account is locked for a while', 'account_locked');
    case 'invalid_current_password':
      return badRequest(refusal.code, 'The current password is not correct');
    case 'invalid_code':
      return badRequest(refusal.code, 'The code is not valid');
    case 'directory_account':
      return badRequest(refusal.code, 'This account is managed by the directory (LDAP)');
    case 'mfa_already_enabled':
      return new HttpError(409, refusal.code, 'MFA is already enabled; disable it first');
    case 'mfa_not_set_up':
      return badRequest(refusal.code, 'Call /auth/mfa/setup first');
    case 'mfa_not_enabled':
      return badRequest(refusal.code, 'MFA is not enabled');
  }
}

function unwrap<T>(result: AccountResult<T>): T {
  if (!result.ok) throw refusalError(result.refusal);
  return result.value;
}

const ROLE_DESCRIPTIONS: Record<(typeof ROLES)[number], string> = {
  admin: 'Everything, including users, settings, signing keys and security decisions',
  maintainer: 'Upload, delete, promote, rescan, quarantine, sync; review queue, audit log and SBOM',
  uploader: 'Upload and import packages; own API tokens',
  auditor: 'Read everything, the review queue, the audit log and SBOM exports',
  reader: 'Read packages, distributions and vulnerabilities (alias: viewer)',
};

export async function authRoutes(app: App, ctx: AppContext): Promise<void> {
  /** `username` as the lockout counts it (canonical), or the account's own spelling once known. */
  async function answerLoginWithToken(request: FastifyRequest, username: string, outcome: LoginOutcome) {
    const answer = await answerLogin(ctx, request, username, outcome);
    if (answer.kind === 'mfa_required') return { access_token: '', token_type: 'bearer', expires_in: 0, mfa_required: true, mfa_token: answer.mfaToken };
    return { access_token: answer.accessToken, token_type: 'bearer', expires_in: answer.expiresIn };
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
    return answerLoginWithToken(request, canonicalUsername(username), await ctx.auth.login({ username, password, otp, ip: request.ip }));
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
    return answerLoginWithToken(request, 'mfa', await ctx.auth.completeMfa(mfa_token, code));
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
      summary: 'Change your own password (ends your sessions; API tokens stay valid)',
      body: Type.Object({ current_password: Type.String({ maxLength: 1000 }), new_password: Type.String({ maxLength: 1000 }) }, { additionalProperties: false }),
      response: { 200: StatusOut, ...errorResponses },
    },
  }, async (request) => {
    const { current_password, new_password } = request.body;
    unwrap(await ctx.accounts.changePassword(principalOf(request).user, current_password, new_password, request.ip));
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
    const issued = await ctx.passwordResets.issue(email);
    if (issued) {
      const base = (await ctx.settings.get('app_url')) ?? ctx.config.appUrl;
      const link = `${base}/reset-password?token=${issued.token}`;
      // Sent in the background: the answer must not reveal, by its timing, whether the address exists.
      void ctx.mail
        .send([email], 'Tollgate password reset', `A password reset was requested for ${issued.user.username}.\n\nOpen ${link} within 30 minutes to choose a new password.\nIf you did not ask for it, ignore this message.`)
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
    const user = await ctx.passwordResets.redeem(token, new_password, request.ip);
    if (!user) throw badRequest('invalid_reset_token', 'The reset link is invalid, used or expired');
    return { status: 'ok' };
  });

  // MFA changes need a session from a login (not an API token: a pipeline credential must not be
  // able to bind the account to a secret its owner never saw) and a fresh proof: the password to
  // start enrolling, a current code to enable or disable.
  const SetupBody = Type.Object(
    { password: Type.Optional(Type.String({ maxLength: 1000 })), current_password: Type.Optional(Type.String({ maxLength: 1000 })) },
    { additionalProperties: false },
  );

  app.post('/auth/mfa/setup', {
    onRequest: requireInteractiveSession,
    schema: {
      tags: ['auth'],
      summary: 'Start enrolling a TOTP authenticator (body: password, alias current_password)',
      body: SetupBody,
      response: { 200: Type.Object({ secret: Type.String(), otpauth_url: Type.String() }), ...errorResponses },
    },
  }, async (request) => {
    requireEnterprise(ctx, 'mfa');
    const password = request.body.password ?? request.body.current_password;
    if (password === undefined) throw unprocessable('password_required', 'The current password is required', [{ loc: ['body', 'password'], msg: 'required' }]);
    const { secret, otpauthUrl } = unwrap(await ctx.accounts.startMfa(principalOf(request).user, password, request.ip));
    return { secret, otpauth_url: otpauthUrl };
  });

  const CodeBody = Type.Object({ code: Type.String({ pattern: '^[0-9]{6}$' }) }, { additionalProperties: false });

  app.post('/auth/mfa/enable', {
    onRequest: requireInteractiveSession,
    schema: { tags: ['auth'], summary: 'Confirm enrolment with a current code', body: CodeBody, response: { 200: StatusOut, ...errorResponses } },
  }, async (request) => {
    requireEnterprise(ctx, 'mfa');
    unwrap(await ctx.accounts.enableMfa(principalOf(request).user, request.body.code, request.ip));
    return { status: 'ok' };
  });

  app.post('/auth/mfa/disable', {
    onRequest: requireInteractiveSession,
    schema: { tags: ['auth'], summary: 'Turn MFA off with a current code', body: CodeBody, response: { 200: StatusOut, ...errorResponses } },
  }, async (request) => {
    requireEnterprise(ctx, 'mfa');
    unwrap(await ctx.accounts.disableMfa(principalOf(request).user, request.body.code, request.ip));
    return { status: 'ok' };
  });
}
