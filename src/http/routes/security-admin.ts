/**
 * Security administration: the CVE policy (stored in the settings `cve_policy`, `sla_days`,
 * `kev_action`), the vulnerability feed sync (`POST /import/sync-security`) and the antivirus
 * engine status and signature update.
 */
import { Type } from 'typebox';
import { parseCvePolicy, type CvePolicy } from '../../domain/security/index.js';
import type { SettingKey } from '../../domain/settings.js';
import type { AppContext } from '../../services/context.js';
import type { AvEngineStatus, AvEngineUpdate } from '../../services/security/avengine.js';
import { policyFromSettings } from '../../services/security/scanner.js';
import { principalOf } from '../auth-hook.js';
import { unprocessable } from '../errors.js';
import { answering, errorResponses, Nullable } from '../schemas.js';
import type { App } from '../types.js';

const Action = Type.Union([Type.Literal('block'), Type.Literal('review'), Type.Literal('warn'), Type.Literal('allow')]);
const SlaDays = Type.Integer({ minimum: 1, maximum: 3650 });
const PolicyOut = Type.Object({
  critical: Action,
  high: Action,
  medium: Action,
  low: Action,
  sla_days: Type.Object({ critical: SlaDays, high: SlaDays, medium: SlaDays, low: SlaDays }),
  kev_action: Type.Union([Type.Literal('review'), Type.Literal('block')]),
});
const PolicyPatch = Type.Object(
  {
    critical: Type.Optional(Action),
    high: Type.Optional(Action),
    medium: Type.Optional(Action),
    low: Type.Optional(Action),
    sla_days: Type.Optional(Type.Object({ critical: Type.Optional(SlaDays), high: Type.Optional(SlaDays), medium: Type.Optional(SlaDays), low: Type.Optional(SlaDays) }, { additionalProperties: false })),
    kev_action: Type.Optional(Type.Union([Type.Literal('review'), Type.Literal('block')])),
  },
  { additionalProperties: false },
);

const FeedReportOut = Type.Object({
  name: Type.String(),
  kind: Type.String(),
  url: Type.String(),
  status: Type.String(),
  bytes: Type.Union([Type.Integer(), Type.Null()]),
  records: Type.Integer(),
  rows: Type.Integer(),
  skipped: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  error_code: Type.Union([Type.String(), Type.Null()]),
});
const SyncOut = answering<NonNullable<Awaited<ReturnType<AppContext['security']['syncFromSettings']>>>>()(Type.Object({
  advisories: Type.Integer(),
  epss: Type.Integer(),
  kev: Type.Integer(),
  feeds: Type.Array(FeedReportOut),
  started_at: Type.String(),
  finished_at: Type.String(),
}));

const AvEngineStatusOut = answering<AvEngineStatus>()(Type.Object({
  engine: Type.Literal('clamav'),
  /** Whether CLAMAV_SOCKET or CLAMAV_HOST is set; `ok` whether clamd answers. */
  configured: Type.Boolean(),
  ok: Type.Boolean(),
  version: Nullable(Type.String()),
  signature_version: Nullable(Type.String()),
  signature_date: Nullable(Type.String()),
  /** The last update run through this service, else the signature database's own date. */
  last_update: Nullable(Type.String()),
  update_command_configured: Type.Boolean(),
  /** Why the engine is not usable, when it is not. */
  detail: Type.Optional(Type.String()),
}));

const AvEngineUpdateOut = answering<AvEngineUpdate>()(Type.Object({
  engine: Type.Literal('clamav'),
  updated: Type.Literal(true),
  exit_code: Type.Integer(),
  /** The end of the update command's output. */
  output: Type.String(),
  version_before: Nullable(Type.String()),
  version_after: Nullable(Type.String()),
  signature_version: Nullable(Type.String()),
  last_update: Type.String(),
}));

const responses = errorResponses;

export async function securityAdminRoutes(app: App, ctx: AppContext): Promise<void> {
  const security = ctx.security;

  const currentPolicy = async (): Promise<CvePolicy & { kev_action: 'review' | 'block' }> => {
    const s = await ctx.settings.all();
    return { ...policyFromSettings(s), kev_action: s.kev_action };
  };

  app.get('/security/policy', {
    schema: { tags: ['security'], summary: 'The CVE policy: action per severity, SLA days per severity, least action for KEV-listed CVEs', response: { ...responses, 200: PolicyOut } },
  }, async () => currentPolicy());

  app.patch('/security/policy', {
    schema: {
      tags: ['security'],
      summary: 'Change the CVE policy (any subset of critical, high, medium, low, sla_days, kev_action); audit SETTINGS_CHANGE',
      body: PolicyPatch,
      response: { ...responses, 200: PolicyOut },
    },
  }, async (request) => {
    const actor = principalOf(request).user;
    const { kev_action: kevAction, ...policyPart } = request.body;
    const current = await currentPolicy();
    const next = parseCvePolicy(policyPart, current);
    const patch: Partial<Record<SettingKey, unknown>> = {
      cve_policy: { critical: next.critical, high: next.high, medium: next.medium, low: next.low },
      sla_days: next.sla_days,
      ...(kevAction ? { kev_action: kevAction } : {}),
    };
    // The settings service records SETTINGS_CHANGE, as for every settings change.
    await ctx.settings.update(patch, { username: actor.username, ip: request.ip });
    return currentPolicy();
  });

  app.post('/import/sync-security', {
    schema: {
      tags: ['security', 'import'],
      summary: 'Download the configured vulnerability feeds (vuln_feeds, epss_url, kev_url) and rebuild the vulnerability database; audit SYNC',
      response: { ...responses, 200: SyncOut },
    },
  }, async (request) => {
    const actor = principalOf(request).user;
    const report = await security.syncFromSettings();
    if (!report) throw unprocessable('no_feeds_configured', 'No security feeds configured: set vuln_feeds (and optionally epss_url, kev_url) in the settings');
    const failed = report.feeds.filter((f) => f.status === 'failed');
    const summary = report.feeds.map((f) => `${f.name}=${f.status}${f.error_code ? `(${f.error_code})` : ''}`).join(', ');
    await ctx.audit.record({
      action: 'SYNC',
      user: actor.username,
      result: failed.length === 0 ? 'SUCCESS' : failed.length === report.feeds.length ? 'FAILURE' : 'WARNING',
      detail: `security feeds: ${summary}; advisories=${report.advisories}; epss=${report.epss}; kev=${report.kev}`,
      ip: request.ip,
    });
    return report;
  });

  app.get('/security/avengine/status', {
    schema: { tags: ['security'], summary: 'Antivirus engine (clamd) status, engine and signature versions, last signature update', response: { ...responses, 200: AvEngineStatusOut } },
  }, async () => security.avengine.status());

  app.post('/security/avengine/update', {
    schema: {
      tags: ['security'],
      summary: 'Run CLAMAV_UPDATE_COMMAND (e.g. freshclam), then reload clamd; audit CLAMAV_UPDATE. 422 when clamd or the command is not configured',
      response: { ...responses, 200: AvEngineUpdateOut },
    },
  }, async (request) => {
    const actor = principalOf(request).user;
    try {
      const result = await security.avengine.update();
      await ctx.audit.record({ action: 'CLAMAV_UPDATE', user: actor.username, result: 'SUCCESS', detail: `signatures=${result.signature_version ?? 'unknown'}; ${result.version_after ?? ''}`, ip: request.ip });
      return result;
    } catch (error) {
      const code = (error as { code?: string }).code ?? 'error';
      await ctx.audit.record({ action: 'CLAMAV_UPDATE', user: actor.username, result: 'FAILURE', detail: `code=${code}; ${(error as Error).message}`.slice(0, 1000), ip: request.ip });
      throw error;
    }
  });
}
