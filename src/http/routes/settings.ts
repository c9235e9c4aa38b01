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

export async function settingsRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/settings', {
    schema: { tags: ['settings'], summary: 'Every setting, secrets masked', response: { 200: SettingsOut, ...errorResponses } },
  }, async () => ctx.settings.masked());

  app.patch('/settings', {
    schema: {
      tags: ['settings'],
      summary: 'Change settings (send the mask back to keep a secret)',
      body: SettingsPatch,
      response: { 200: SettingsOut, ...errorResponses },
    },
  }, async (request) => {
    const actor = principalOf(request).user;
    const changed = await ctx.settings.update(request.body as Partial<Record<SettingKey, unknown>>, actor.username);
    if (changed.length) {
      // Names only: secret values never reach the audit trail.
      await ctx.audit.record({ action: 'SETTINGS_CHANGE', user: actor.username, result: 'SUCCESS', detail: `changed: ${changed.join(', ')}`, ip: request.ip });
    }
    return ctx.settings.masked();
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
