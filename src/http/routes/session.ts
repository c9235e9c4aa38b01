/**
 * Browser sessions next to the bearer API: the same login, answered with an httpOnly cookie
 * instead of a token in the body (src/http/session-cookie.ts says why and how CSRF is refused).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { canonicalUsername } from '../../domain/usernames.js';
import type { LoginOutcome } from '../../services/auth.js';
import type { AppContext } from '../../services/context.js';
import { publicUser } from '../../services/users.js';
import { mayDecide, principalOf } from '../auth-hook.js';
import { requireEnterprise } from '../edition.js';
import { answerLogin } from '../login-answer.js';
import { errorResponses, StatusOut, UserOut } from '../schemas.js';
import { clearedSessionCookie, csrfTokenFor, secureCookies, sessionCookie, sessionCookieOf } from '../session-cookie.js';
import type { App } from '../types.js';

const SessionOut = Type.Object({
  mfa_required: Type.Boolean(),
  mfa_token: Type.Optional(Type.String()),
  user: Type.Optional(UserOut),
  /** Sent back in the x-csrf-token header with every change the cookie authenticates. */
  csrf_token: Type.Optional(Type.String()),
  expires_in: Type.Optional(Type.Integer()),
});

export async function sessionRoutes(app: App, ctx: AppContext): Promise<void> {
  async function openSession(request: FastifyRequest, reply: FastifyReply, username: string, outcome: LoginOutcome) {
    const answer = await answerLogin(ctx, request, username, outcome, '; browser session');
    if (answer.kind === 'mfa_required') return { mfa_required: true, mfa_token: answer.mfaToken };
    void reply.header('set-cookie', sessionCookie(answer.accessToken, answer.expiresIn, secureCookies(request, ctx.config.appUrl)));
    return {
      mfa_required: false,
      user: publicUser(answer.user),
      csrf_token: csrfTokenFor(ctx.config.jwtSecret, answer.accessToken),
      expires_in: answer.expiresIn,
    };
  }

  app.post('/auth/session', {
    schema: {
      tags: ['auth'],
      summary: 'Log in for the browser: the session goes in an httpOnly cookie, never in the body',
      body: Type.Object(
        { username: Type.String({ minLength: 1, maxLength: 200 }), password: Type.String({ maxLength: 1000 }), otp: Type.Optional(Type.String({ maxLength: 12 })) },
        { additionalProperties: false },
      ),
      response: { 200: SessionOut, ...errorResponses },
    },
  }, async (request, reply) => {
    const { username, password, otp } = request.body;
    return openSession(request, reply, canonicalUsername(username), await ctx.auth.login({ username, password, otp, ip: request.ip }));
  });

  app.post('/auth/session/mfa', {
    schema: {
      tags: ['auth'],
      summary: 'Second step of a browser login with MFA',
      body: Type.Object({ mfa_token: Type.String({ minLength: 1, maxLength: 2000 }), code: Type.String({ pattern: '^[0-9]{6}$' }) }, { additionalProperties: false }),
      response: { 200: SessionOut, ...errorResponses },
    },
  }, async (request, reply) => {
    requireEnterprise(ctx, 'mfa');
    const { mfa_token, code } = request.body;
    return openSession(request, reply, 'mfa', await ctx.auth.completeMfa(mfa_token, code));
  });

  app.get('/auth/session', {
    schema: {
      tags: ['auth'],
      summary: 'The session in force: the account, and the CSRF token when the cookie authenticated the call',
      response: {
        200: Type.Object({
          user: UserOut,
          /** The role in force for this session (an API token's may be narrower than its owner's). */
          role: Type.String(),
          csrf_token: Type.Union([Type.String(), Type.Null()]),
          /** Whether this session may decide on reviews (it depends on the setting decide_min_role). */
          can_decide: Type.Boolean(),
        }),
        ...errorResponses,
      },
    },
  }, async (request) => {
    const principal = principalOf(request);
    return {
      user: publicUser(principal.user),
      role: principal.role,
      csrf_token: request.sessionJwt ? csrfTokenFor(ctx.config.jwtSecret, request.sessionJwt) : null,
      can_decide: await mayDecide(principal.role, ctx),
    };
  });

  // Public: clearing a cookie needs no proof, and an expired session must still be able to leave.
  app.delete('/auth/session', {
    schema: { tags: ['auth'], summary: 'Log out of the browser session (clears the cookie)', response: { 200: StatusOut, ...errorResponses } },
  }, async (request, reply) => {
    const cookie = sessionCookieOf(request);
    const principal = cookie ? await ctx.auth.authenticate(cookie) : null;
    if (principal && !('error' in principal)) {
      await ctx.audit.record({ action: 'LOGOUT', user: principal.user.username, result: 'SUCCESS', detail: 'browser session closed', ip: request.ip });
    }
    void reply.header('set-cookie', clearedSessionCookie(secureCookies(request, ctx.config.appUrl)));
    return { status: 'ok' };
  });
}
