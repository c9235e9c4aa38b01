/**
 * The browser session: the login's JWT in an httpOnly, SameSite=Strict cookie, so page scripts
 * never hold it and a reload keeps the session. A request the cookie authenticates that changes
 * anything must also carry the session's CSRF token in a header, which another site's page can
 * neither read nor send: SameSite already keeps the cookie off cross-site requests, the token
 * covers browsers and same-site neighbours (other apps on sibling subdomains) where it does not.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'tollgate_session';
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const MAX_COOKIE_LENGTH = 4096;

export const changesState = (method: string) => !SAFE_METHODS.has(method.toUpperCase());

/** The session cookie's value, if the request carries one (the first of that name). */
export function sessionCookieOf(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header || header.length > 16 * 1024) return null;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at === -1 || part.slice(0, at).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(at + 1).trim();
    return value && value.length <= MAX_COOKIE_LENGTH && /^[\w.-]+$/.test(value) ? value : null;
  }
  return null;
}

/** Whether the cookie may be sent over plain HTTP: not when the service is reached over HTTPS. */
export function secureCookies(request: FastifyRequest, appUrl: string): boolean {
  return request.protocol === 'https' || appUrl.startsWith('https://');
}

export function sessionCookie(jwt: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${SESSION_COOKIE}=${jwt}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])].join('; ');
}

export function clearedSessionCookie(secure: boolean): string {
  return [`${SESSION_COOKIE}=`, 'Path=/', 'Max-Age=0', 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])].join('; ');
}

/** The CSRF token of one session: derived from its JWT, so it needs no storage and dies with it. */
export function csrfTokenFor(secret: string, jwt: string): string {
  return createHmac('sha256', secret).update(`csrf:${jwt}`).digest('base64url');
}

export function csrfTokenMatches(secret: string, jwt: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length > 200) return false;
  const expected = Buffer.from(csrfTokenFor(secret, jwt));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
