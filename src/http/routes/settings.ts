import { Type, type TSchema } from 'typebox';
import { SETTINGS, SETTING_KEYS, type SettingKey } from '../../domain/settings.js';
import type { App } from '../types.js';
import type { AppContext } from '../../services/context.js';
import { runRetention } from '../../services/retention.js';
import { principalOf } from '../auth-hook.js';
import { errorResponses } from '../schemas.js';

/** Every declared key is optional in a PATCH; an unknown key is a 422 (additionalProperties). */
const SettingsPatch = Type.Object(
  Object.fromEntries(SETTING_KEYS.map((k) => [k, Type.Optional(SETTINGS[k].schema as TSchema)])),
  { additionalProperties: false, minProperties: 1 },
);

const SettingsOut = Type.Object(
  Object.fromEntries(SETTING_KEYS.map((k) => [k, Type.Unknown()])),
  { additionalProperties: false },
);

/** The PATCH answer also names the secrets it cleared because their destination changed. */
const SettingsPatchOut = Type.Object(
  { ...SettingsOut.properties, cleared_secrets: Type.Array(Type.String()) },
  { additionalProperties: false },
);

export async function settingsRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/settings', {
    schema: { tags: ['settings'], summary: 'Every setting, secrets masked', response: { 200: SettingsOut, ...errorResponses } },
  }, async () => ctx.settings.masked());

  app.patch('/settings', {
    schema: {
      tags: ['settings'],
      summary: 'Change settings (send the mask back to keep a secret; changing where a secret is sent clears it unless it is sent again)',
      body: SettingsPatch,
      response: { 200: SettingsPatchOut, ...errorResponses },
    },
  }, async (request) => {
    const actor = principalOf(request).user;
    const { cleared } = await ctx.settings.update(request.body as Partial<Record<SettingKey, unknown>>, { username: actor.username, ip: request.ip });
    return { ...(await ctx.settings.masked()), cleared_secrets: cleared };
  });

  app.get('/settings/next-sync', {
    schema: {
      tags: ['settings'],
      summary: 'When each daily job runs next (UTC)',
      response: { 200: Type.Object({ jobs: Type.Record(Type.String(), Type.String()) }), ...errorResponses },
    },
  }, async () => ({ jobs: await ctx.jobs.nextRuns() }));

  app.post('/settings/run-retention', {
    schema: {
      tags: ['settings'],
      summary: 'Apply the audit-log retention now (whole day files older than retention_days)',
      response: { 200: Type.Object({ retention_days: Type.Integer(), removed_files: Type.Array(Type.String()) }), ...errorResponses },
    },
  }, async (request) => runRetention(ctx, principalOf(request).user.username, request.ip));
}
