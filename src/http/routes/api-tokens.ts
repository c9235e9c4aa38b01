import { Type } from 'typebox';
import { parseRole, type Role } from '../../domain/roles.js';
import { TOKEN_PREFIX } from '../../services/api-tokens.js';
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
      }, { additionalProperties: false }),
      response: {
        201: Type.Object({
          token_id: Type.String(), name: Type.String(), role: RoleOut, roles: Type.Array(RoleOut),
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
    // Without a role the token gets the rights the caller has for this request.
    const role: Role = parsed[0] ?? p.role;
    const { row, raw } = await ctx.tokens.create({ ...p.user, role: p.role }, body.name, role, body.expires_days ?? null);
    await ctx.audit.record({ action: 'TOKEN_CREATE', user: p.user.username, result: 'SUCCESS', detail: `token ${row.id} "${row.name}" role=${role}`, ip: request.ip });
    return reply.status(201).send({
      token_id: row.id, name: row.name, role, roles: [role], expires_at: toApiTime(row.expires_at), token: raw, prefix: TOKEN_PREFIX,
      message: 'Store this token now: it is shown only once.',
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
    await ctx.audit.record({ action: 'TOKEN_REVOKE', user: p.user.username, result: 'SUCCESS', detail: `token ${row.id} "${row.name}"`, ip: request.ip });
    return reply.status(204).send(null);
  });
}
