import type { FastifyRequest } from 'fastify';
import type { UserRow } from '../adapters/db/users.table.js';
import type { LoginOutcome } from '../services/auth.js';
import type { AppContext } from '../services/context.js';
import { tooManyRequests, unauthorized } from './errors.js';

export type LoginAnswer =
  | { kind: 'signed_in'; user: UserRow; accessToken: string; expiresIn: number }
  | { kind: 'mfa_required'; mfaToken: string };

/**
 * What every login route (the bearer login and the browser session) does with a login's outcome:
 * the LOGIN audit entry with the source IP, and the refusals as errors. `how` names the kind of
 * session in the audit detail.
 */
export async function answerLogin(ctx: AppContext, request: FastifyRequest, username: string, outcome: LoginOutcome, how = ''): Promise<LoginAnswer> {
  const audit = (user: string, result: 'SUCCESS' | 'FAILURE', detail: string) =>
    ctx.audit.record({ action: 'LOGIN', user, result, detail, ip: request.ip });
  switch (outcome.kind) {
    case 'locked':
      await audit(username, 'FAILURE', 'account locked after repeated failures');
      throw tooManyRequests(outcome.retryAfter, 'Too many failed logins; the account is locked for a while', 'account_locked');
    case 'failed':
      await audit(outcome.user?.username ?? username, 'FAILURE', outcome.reason);
      if (outcome.reason === 'account_disabled') throw unauthorized('This account is deactivated', 'account_disabled');
      throw unauthorized('Incorrect username, password or code', 'invalid_credentials');
    case 'mfa_required':
      return { kind: 'mfa_required', mfaToken: outcome.mfaToken };
    case 'token':
      await audit(outcome.user.username, 'SUCCESS', `login via ${outcome.user.source}${how}`);
      return { kind: 'signed_in', user: outcome.user, accessToken: outcome.accessToken, expiresIn: outcome.expiresIn };
  }
}
