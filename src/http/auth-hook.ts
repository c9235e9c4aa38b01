import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../services/context.js';
import { forbidden, HttpError, unauthorized } from './errors.js';
import type { Access } from './permissions.js';
import type { Role } from '../domain/roles.js';
import type { Actor } from '../services/actor.js';
import { changesState, CSRF_HEADER, csrfTokenMatches, sessionCookieOf } from './session-cookie.js';

function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/** A valid read token (`tg_r_…`) on an API route: it reads repository files, nothing else. */
export const readTokenRefused = () =>
  new HttpError(403, 'read_token_not_allowed', 'A read token (tg_r_…) only reads the /repo/ files of its distributions; the API needs an API token or a login');

/** Whether the role may decide on reviews: admin, or maintainer too when the setting says so. */
export async function mayDecide(role: Role, ctx: AppContext): Promise<boolean> {
  if (role === 'admin') return true;
  return role === 'maintainer' && (await ctx.settings.get('decide_min_role')) === 'maintainer';
}

async function allowed(access: Access, role: Role, ctx: AppContext): Promise<boolean> {
  if (access === 'public' || access === 'any') return true;
  if (access === 'decider') return mayDecide(role, ctx);
  return access.includes(role);
}

/**
 * Authenticates every request to a non-public route before its body is read, then checks the
 * route's entry in the permission table against the role in force for this request.
 */
export function installAuth(app: FastifyInstance, ctx: AppContext): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('sessionJwt', null);
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config?.access;
    if (access === undefined || access === 'public') return;
    // An Authorization header wins: API clients are never judged by a cookie their browser holds.
    const cookie = bearerOf(request) ? null : sessionCookieOf(request);
    const bearer = bearerOf(request) ?? cookie;
    if (!bearer) throw unauthorized();
    if (cookie && changesState(request.method) && !csrfTokenMatches(ctx.config.jwtSecret, cookie, request.headers[CSRF_HEADER])) {
      throw new HttpError(403, 'csrf_token_invalid', `A change made with the session cookie needs the session's CSRF token in the ${CSRF_HEADER} header`);
    }
    const result = await ctx.auth.authenticate(bearer);
    // The cookie only ever holds a login's JWT; an API token there was not put by this service.
    if (cookie && !('error' in result) && result.via !== 'jwt') throw unauthorized('Invalid or expired credentials', 'invalid_token');
    if (cookie) request.sessionJwt = cookie;
    if ('error' in result) {
      if (result.error === 'read_token') throw readTokenRefused();
      throw result.error === 'inactive'
        ? unauthorized('This account is deactivated', 'account_disabled')
        : unauthorized('Invalid or expired credentials', 'invalid_token');
    }
    request.principal = result;
    if (!(await allowed(access, result.role, ctx))) throw forbidden();
  });
}

/** The authenticated caller of a non-public route (the auth hook guarantees one). */
export function principalOf(request: FastifyRequest) {
  if (!request.principal) throw unauthorized();
  return request.principal;
}

/** The caller as the use cases audit it. */
export function actorOf(request: FastifyRequest): Actor {
  return { username: principalOf(request).user.username, ip: request.ip };
}

/**
 * Route-level onRequest hook (after the auth hook) for routes that change how the account itself
 * is protected: they need a session from an interactive login, never an API token.
 */
export async function requireInteractiveSession(request: FastifyRequest): Promise<void> {
  if (principalOf(request).via !== 'jwt') {
    throw new HttpError(403, 'interactive_session_required', 'This needs a session from a login (POST /auth/token); API tokens cannot change MFA');
  }
}
