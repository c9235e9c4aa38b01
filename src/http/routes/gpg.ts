import { Type } from 'typebox';
import type { KeyInfo } from '../../adapters/signing/signer.js';
import { DISTRIBUTIONS } from '../../domain/distributions.js';
import type { AppContext } from '../../services/context.js';
import { bumpGeneration } from '../../services/packages/package-store.js';
import { isoUtc } from '../../domain/time.js';
import { principalOf } from '../auth-hook.js';
import { errorResponses } from '../schemas.js';
import type { App } from '../types.js';

const KeyOut = Type.Object({
  fingerprint: Type.String(),
  key_id: Type.String(),
  uids: Type.Array(Type.String()),
  algorithm: Type.String(),
  created: Type.String(),
  expires: Type.Union([Type.String(), Type.Null()]),
  armored_public_key: Type.String(),
  key_count: Type.Integer(),
  keys: Type.Array(Type.Object({ fingerprint: Type.String(), algorithm: Type.String(), created: Type.String(), active: Type.Boolean() })),
});

export async function gpgRoutes(app: App, ctx: AppContext): Promise<void> {
  const { keyring } = ctx.repo;
  const describe = async () => {
    const signer = await keyring.ensureKey();
    const keys = await keyring.list();
    const time = (d: Date | null) => (d ? isoUtc(d) : null);
    return {
      fingerprint: signer.fingerprint,
      key_id: signer.keyId,
      uids: signer.userIds,
      algorithm: signer.algorithm,
      created: isoUtc(signer.created),
      expires: time(signer.expires),
      armored_public_key: signer.publicKeyArmored,
      key_count: keys.length,
      keys: keys.map((k: KeyInfo & { active: boolean }) => ({ fingerprint: k.fingerprint, algorithm: k.algorithm, created: isoUtc(k.created), active: k.active })),
    };
  };

  app.get('/settings/gpg', {
    schema: { tags: ['settings'], summary: 'The repository signing key', response: { ...errorResponses, 200: KeyOut } },
  }, async () => describe());

  app.post('/settings/gpg/generate', {
    schema: {
      tags: ['settings'],
      summary: 'Generate a new signing key: it becomes active, older keys are kept, every index is re-signed',
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
    await keyring.generate({
      name, email, expiresDays: expires_days,
      type: algorithm === 'ed25519' ? 'ed25519' : 'rsa',
      ...(algorithm === 'rsa3072' ? { rsaBits: 3072 } : {}),
    });
    // Every index is re-signed with the new key before the answer.
    for (const d of DISTRIBUTIONS) await bumpGeneration(ctx.db, d.codename);
    await Promise.all(DISTRIBUTIONS.map((d) => ctx.repo.publisher.request(d.codename)));
    const info = await describe();
    await ctx.audit.record({ action: 'GPG_GENERATE', user: principalOf(request).user.username, result: 'SUCCESS', detail: `fingerprint=${info.fingerprint}; algorithm=${info.algorithm}`, ip: request.ip });
    return reply.status(201).send(info);
  });
}
