import { Type } from 'typebox';
import { parseRole, type Role } from '../../domain/roles.js';
import { findDistribution } from '../../domain/distributions.js';
import { prefixOf, type ApiTokenKind } from '../../services/api-tokens.js';
import type { App } from '../types.js';
import type { AppContext } from '../../services/context.js';
import { toApiTime } from '../../domain/time.js';
import { principalOf } from '../auth-hook.js';
import { unprocessable } from '../errors.js';
import { answering, errorResponses, RoleName, RoleOut, Timestamp } from '../schemas.js';

const TokenOut = answering<Awaited<ReturnType<AppContext['tokens']['list']>>[number]>()(Type.Object({
  token_id: Type.String(),
  name: Type.String(),
  role: RoleOut,
  roles: Type.Array(RoleOut),
  username: Type.String(),
  kind: Type.Union([Type.Literal('api'), Type.Literal('read')], { description: '`read`: reads the /repo/ files of `distributions` only' }),
  distributions: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'Read tokens: the codenames they read; null for API tokens' }),
  prefix: Type.String(),
  created_at: Timestamp,
  expires_at: Timestamp,
  last_used_at: Timestamp,
  revoked: Type.Boolean(),
}));

export async function apiTokenRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/auth/api-tokens', {
    schema: { tags: ['api-tokens'], summary: 'Your API tokens (all tokens for admins)', response: { 200: Type.Array(TokenOut), ...errorResponses } },
  }, async (request) => {
    const p = principalOf(request);
    return ctx.tokens.list(p.user, p.role === 'admin');
  });

  app.post('/auth/api-tokens', {
    schema: {
      tags: ['api-tokens'],
      summary: 'Create an API token; the raw token is shown only in this answer',
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 100 }),
        role: Type.Optional(RoleName),
        roles: Type.Optional(Type.Array(RoleName, { minItems: 1, maxItems: 5 })),
        expires_days: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()])),
        kind: Type.Optional(Type.Union([Type.Literal('api'), Type.Literal('read')], {
          description: '`api` (default): the API with the token\'s role. `read`: a `tg_r_` token that only reads the /repo/ files of `distributions`',
        })),
        distributions: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 100, description: 'Read tokens: the codenames they read (private or public)' })),
      }, { additionalProperties: false }),
      response: {
        201: Type.Object({
          token_id: Type.String(), name: Type.String(), role: RoleOut, roles: Type.Array(RoleOut),
          kind: Type.Union([Type.Literal('api'), Type.Literal('read')]), distributions: Type.Union([Type.Array(Type.String()), Type.Null()]),
          expires_at: Timestamp, token: Type.String(), prefix: Type.String(), message: Type.String(),
        }),
        ...errorResponses,
      },
    },
  }, async (request, reply) => {
    const p = principalOf(request);
    const body = request.body;
    const names = [...(body.role ? [body.role] : []), ...(body.roles ?? [])];
    const parsed = [...new Set(names.map((n) => parseRole(n)))];
    if (parsed.length > 1 || parsed[0] === null) {
      throw unprocessable('invalid_role', 'A token carries exactly one role', [{ loc: ['body', 'roles'], msg: 'exactly one role' }]);
    }
    const kind: ApiTokenKind = body.kind ?? 'api';
    const distributions = kind === 'read' ? readScope(body.distributions, parsed[0]) : null;
    if (kind === 'api' && body.distributions !== undefined) {
      throw unprocessable('distributions_need_read_token', 'Only a read token (kind "read") is scoped to distributions', [
        { loc: ['body', 'distributions'], msg: 'allowed with kind "read" only' },
      ]);
    }
    // Without a role the token gets the rights the caller has for this request; a read token reads.
    const role: Role = kind === 'read' ? 'reader' : parsed[0] ?? p.role;
    const { row, raw } = await ctx.tokens.create({ ...p.user, role: p.role }, body.name, role, body.expires_days ?? null, distributions ? { distributions } : null);
    const scope = distributions ? ` kind=read distributions=${distributions.join(',')}` : '';
    await ctx.audit.record({ action: 'TOKEN_CREATE', user: p.user.username, result: 'SUCCESS', detail: `token ${row.id} "${row.name}" role=${role}${scope}`, ip: request.ip });
    return reply.status(201).send({
      token_id: row.id, name: row.name, role, roles: [role], kind, distributions, expires_at: toApiTime(row.expires_at), token: raw, prefix: prefixOf(kind),
      message: kind === 'read'
        ? `Store this token now: it is shown only once. It reads /repo/ files of ${distributions!.join(', ')} (HTTP Basic password or Bearer) and nothing else.`
        : 'Store this token now: it is shown only once.',
    });
  });

  app.delete('/auth/api-tokens/:token_id', {
    schema: {
      tags: ['api-tokens'],
      summary: 'Revoke a token (immediately)',
      params: Type.Object({ token_id: Type.String({ maxLength: 100 }) }),
      response: { 204: Type.Null(), ...errorResponses },
    },
  }, async (request, reply) => {
    const p = principalOf(request);
    const row = await ctx.tokens.revoke(p.user, request.params.token_id, p.role === 'admin');
    const kind = row.kind === 'read' ? ' kind=read' : '';
    await ctx.audit.record({ action: 'TOKEN_REVOKE', user: p.user.username, result: 'SUCCESS', detail: `token ${row.id} "${row.name}"${kind}`, ip: request.ip });
    return reply.status(204).send(null);
  });
}

/**
 * A read token's distributions: at least one, each an active distribution (private or public),
 * each once. Its role is `reader`; another role asked for is refused rather than ignored.
 */
function readScope(codenames: string[] | undefined, role: Role | null | undefined): string[] {
  if (role !== undefined && role !== 'reader') {
    throw unprocessable('invalid_role', 'A read token carries the role reader', [{ loc: ['body', 'role'], msg: 'read tokens are reader tokens' }]);
  }
  if (!codenames || codenames.length === 0) {
    throw unprocessable('distributions_required', 'A read token names the distributions it reads', [{ loc: ['body', 'distributions'], msg: 'at least one codename' }]);
  }
  const unknown = codenames.filter((c) => !findDistribution(c));
  if (unknown.length > 0) {
    throw unprocessable('unknown_distribution', `No such distribution: ${unknown.join(', ')}`, unknown.map((c) => ({ loc: ['body', 'distributions', String(codenames.indexOf(c))], msg: `unknown codename ${c}` })));
  }
  return [...new Set(codenames)];
}
