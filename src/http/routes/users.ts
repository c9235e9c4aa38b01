import { Type } from 'typebox';
import { parseRole, type Role } from '../../domain/roles.js';
import type { App } from '../types.js';
import type { AppContext } from '../../services/context.js';
import { publicUser } from '../../services/users.js';
import { principalOf } from '../auth-hook.js';
import { badRequest, notFound, unprocessable } from '../errors.js';
import { errorResponses, RoleName, StatusOut, UserOut, Username } from '../schemas.js';

const Email = Type.Union([Type.String({ format: 'email', maxLength: 320 }), Type.Null()]);
const FullName = Type.Union([Type.String({ maxLength: 200 }), Type.Null()]);
const UsernameParams = Type.Object({ username: Username });

/** Users have one role; form 1 sends `roles: [..]`, form 2 `role`. Both must agree when both come. */
function roleFrom(body: { role?: string; roles?: string[] }, required: boolean): Role | undefined {
  const names = [...(body.role ? [body.role] : []), ...(body.roles ?? [])];
  const roles = [...new Set(names.map((n) => parseRole(n)))];
  if (roles.length === 0) {
    if (required) throw unprocessable('role_required', 'role (or roles) is required', [{ loc: ['body', 'role'], msg: 'required' }]);
    return undefined;
  }
  if (roles.length > 1 || roles[0] === null) {
    throw unprocessable('invalid_role', 'A user has exactly one role', [{ loc: ['body', 'roles'], msg: 'exactly one role' }]);
  }
  return roles[0]!;
}

export async function userRoutes(app: App, ctx: AppContext): Promise<void> {
  const load = async (username: string) => {
    const user = await ctx.users.byUsername(username);
    if (!user) throw notFound(`User ${username}`, 'user_not_found');
    return user;
  };

  app.get('/auth/users', {
    schema: { tags: ['users'], summary: 'List users', response: { 200: Type.Array(UserOut), ...errorResponses } },
  }, async () => (await ctx.users.list()).map(publicUser));

  app.get('/auth/users/:username', {
    schema: { tags: ['users'], summary: 'One user', params: UsernameParams, response: { 200: UserOut, ...errorResponses } },
  }, async (request) => publicUser(await load(request.params.username)));

  app.post('/auth/users', {
    schema: {
      tags: ['users'],
      summary: 'Create a user (form 1: roles array; form 2: role)',
      body: Type.Object({
        username: Username,
        password: Type.String({ maxLength: 1000 }),
        email: Type.Optional(Email),
        full_name: Type.Optional(FullName),
        role: Type.Optional(RoleName),
        roles: Type.Optional(Type.Array(RoleName, { minItems: 1, maxItems: 5 })),
      }, { additionalProperties: false }),
      response: { 201: UserOut, ...errorResponses },
    },
  }, async (request, reply) => {
    const actor = principalOf(request).user;
    const body = request.body;
    const role = roleFrom(body, true)!;
    const user = await ctx.users.create({ username: body.username, password: body.password, role, email: body.email ?? null, full_name: body.full_name ?? null });
    await ctx.audit.record({ action: 'USER_CREATE', user: actor.username, result: 'SUCCESS', detail: `created ${user.username} with role ${role}`, ip: request.ip });
    return reply.status(201).send(publicUser(user));
  });

  app.patch('/auth/users/:username', {
    schema: {
      tags: ['users'],
      summary: 'Change role, e-mail, name or active flag',
      params: UsernameParams,
      body: Type.Object({
        role: Type.Optional(RoleName),
        roles: Type.Optional(Type.Array(RoleName, { minItems: 1, maxItems: 5 })),
        email: Type.Optional(Email),
        full_name: Type.Optional(FullName),
        active: Type.Optional(Type.Boolean()),
      }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: UserOut, ...errorResponses },
    },
  }, async (request) => {
    const actor = principalOf(request).user;
    const user = await load(request.params.username);
    const body = request.body;
    const role = roleFrom(body, false);
    const self = user.id === actor.id;
    if (self && role !== undefined && role !== user.role) throw badRequest('self_role_change', 'You cannot change your own role');
    if (self && body.active === false) throw badRequest('self_deactivate', 'You cannot deactivate your own account');
    const updated = await ctx.users.update(user, { role, email: body.email, full_name: body.full_name, active: body.active });
    if (role !== undefined && role !== user.role) {
      await ctx.audit.record({ action: 'USER_ROLE_CHANGE', user: actor.username, result: 'SUCCESS', detail: `${user.username}: ${user.role} -> ${role}`, ip: request.ip });
    }
    const other = (['email', 'full_name', 'active'] as const).filter((k) => body[k] !== undefined);
    if (other.length) {
      await ctx.audit.record({ action: 'USER_UPDATE', user: actor.username, result: 'SUCCESS', detail: `${user.username}: ${other.map((k) => (k === 'active' ? `active=${body.active}` : k)).join(', ')}`, ip: request.ip });
    }
    return publicUser(updated);
  });

  app.delete('/auth/users/:username', {
    schema: { tags: ['users'], summary: 'Delete a user', params: UsernameParams, response: { 204: Type.Null(), ...errorResponses } },
  }, async (request, reply) => {
    const actor = principalOf(request).user;
    const user = await load(request.params.username);
    if (user.id === actor.id) throw badRequest('self_delete', 'You cannot delete your own account');
    await ctx.users.remove(user);
    await ctx.audit.record({ action: 'USER_DELETE', user: actor.username, result: 'SUCCESS', detail: `deleted ${user.username}`, ip: request.ip });
    return reply.status(204).send(null);
  });

  app.post('/auth/users/:username/reset-password', {
    schema: {
      tags: ['users'],
      summary: "Force a new password for another user (ends that user's sessions)",
      params: UsernameParams,
      body: Type.Object({ new_password: Type.String({ maxLength: 1000 }) }, { additionalProperties: false }),
      response: { 200: StatusOut, ...errorResponses },
    },
  }, async (request) => {
    const actor = principalOf(request).user;
    const user = await load(request.params.username);
    if (user.source !== 'local') throw badRequest('directory_account', 'This account is managed by the directory (LDAP)');
    await ctx.users.setPassword(user, request.body.new_password);
    await ctx.audit.record({ action: 'PASSWORD_RESET', user: actor.username, result: 'SUCCESS', detail: `reset password of ${user.username}`, ip: request.ip });
    return { status: 'ok' };
  });
}
