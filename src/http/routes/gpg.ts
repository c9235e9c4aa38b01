import { Type } from 'typebox';
import type { AppContext } from '../../services/context.js';
import { actorOf } from '../auth-hook.js';
import { answering, errorResponses, Nullable } from '../schemas.js';
import type { App } from '../types.js';

const KeyOut = answering<Awaited<ReturnType<AppContext['repo']['keys']['describe']>>>()(Type.Object({
  fingerprint: Type.String(),
  key_id: Type.String(),
  uids: Type.Array(Type.String()),
  algorithm: Type.String(),
  created: Type.String(),
  expires: Type.Union([Type.String(), Type.Null()]),
  armored_public_key: Type.String(),
  key_count: Type.Integer(),
  keys: Type.Array(Type.Object({ fingerprint: Type.String(), algorithm: Type.String(), created: Type.String(), active: Type.Boolean() })),
  rpm_signing: Type.Object({
    running: Type.Boolean(),
    packages: Type.Integer(),
    signed_with_active_key: Type.Integer(),
    kept_upstream: Type.Integer(),
    started_at: Nullable(Type.String()),
    finished_at: Nullable(Type.String()),
    failures: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), version: Type.String(), distribution: Type.String(), reason: Type.String() })),
  }),
}));

export async function gpgRoutes(app: App, ctx: AppContext): Promise<void> {
  const keys = ctx.repo.keys;

  app.get('/settings/gpg', {
    schema: { tags: ['settings'], summary: 'The repository signing key', response: { ...errorResponses, 200: KeyOut } },
  }, async () => keys.describe());

  app.post('/settings/gpg/generate', {
    schema: {
      tags: ['settings'],
      summary: 'Generate a new signing key: it becomes active, older keys are kept, every index is re-signed, RPM packages are re-signed in the background',
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 200 }),
        email: Type.String({ format: 'email', maxLength: 254 }),
        algorithm: Type.Optional(Type.Union([Type.Literal('rsa4096'), Type.Literal('rsa3072'), Type.Literal('ed25519')])),
        expires_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 36500 })),
      }, { additionalProperties: false }),
      response: { ...errorResponses, 201: KeyOut },
    },
  }, async (request, reply) => {
    const { name, email, algorithm = 'rsa4096', expires_days } = request.body;
    return reply.status(201).send(await keys.rotate({ name, email, algorithm, expiresDays: expires_days }, actorOf(request)));
  });
}
