/** The dashboard: any authenticated role. */
import { Type } from 'typebox';
import { HISTORY_DEFAULT_DAYS, HISTORY_MAX_DAYS } from '../../domain/dashboard.js';
import type { AppContext } from '../../services/context.js';
import { answering, errorResponses, Nullable, SeverityCounts } from '../schemas.js';
import type { App } from '../types.js';

const Counts = Type.Record(Type.String(), Type.Integer());
const Series = { uploads: Type.Integer(), publications: Type.Integer(), reviews: Type.Integer(), quarantines: Type.Integer() };

const StatsOut = answering<Awaited<ReturnType<AppContext['dashboard']['stats']>>>()(Type.Object({
  generated_at: Type.String(),
  packages_total: Type.Integer({ description: 'Package rows: one per name, version, arch and distribution' }),
  storage_bytes: Type.Integer({ description: 'Size of the stored files, each distinct SHA-256 counted once' }),
  stored_files: Type.Integer({ description: 'Distinct stored files (SHA-256)' }),
  by_status: Counts,
  by_format: Type.Array(Type.Object({ format: Type.String(), packages: Type.Integer(), stored_files: Type.Integer(), storage_bytes: Type.Integer() })),
  by_distribution: Type.Array(Type.Object({ distribution: Type.String(), format: Type.String(), packages: Type.Integer(), by_status: Counts })),
}));

const HistoryOut = answering<Awaited<ReturnType<AppContext['dashboard']['history']>>>()(Type.Object({
  days: Type.Integer(),
  from: Type.String({ description: 'First UTC day (YYYY-MM-DD)' }),
  to: Type.String({ description: 'Last UTC day: today' }),
  totals: Type.Object(Series),
  history: Type.Array(Type.Object({ day: Type.String(), ...Series }), { description: 'Every day of the window, oldest first; days without activity have zeros' }),
}));

const SummaryOut = answering<Awaited<ReturnType<AppContext['dashboard']['summary']>>>()(Type.Object({
  generated_at: Type.String(),
  packages_total: Type.Integer(),
  pending_reviews: Type.Integer({ description: 'Packages in the review queue (pending_review and upgrade_required)' }),
  pending_by_status: Counts,
  findings: SeverityCounts,
  findings_total: Type.Integer(),
  recent_activity: Type.Array(Type.Object({
    seq: Type.Integer(),
    timestamp: Type.String(),
    action: Type.String(),
    user: Nullable(Type.String()),
    result: Type.String(),
    package: Nullable(Type.String()),
    version: Nullable(Type.String()),
    detail: Nullable(Type.String()),
  })),
}));

export async function dashboardRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/dashboard/stats', {
    schema: { tags: ['dashboard'], summary: 'Packages per distribution, status and format; storage used', response: { 200: StatsOut, ...errorResponses } },
  }, async () => ctx.dashboard.stats());

  app.get('/dashboard/history', {
    schema: {
      tags: ['dashboard'],
      summary: 'Uploads, publications, review decisions and quarantines per UTC day, from the audit trail',
      querystring: Type.Object({
        days: Type.Optional(Type.Integer({ minimum: 1, maximum: HISTORY_MAX_DAYS, default: HISTORY_DEFAULT_DAYS })),
      }, { additionalProperties: false }),
      response: { 200: HistoryOut, ...errorResponses },
    },
  }, async (request) => ctx.dashboard.history(request.query.days ?? HISTORY_DEFAULT_DAYS));

  app.get('/dashboard/summary', {
    schema: {
      tags: ['dashboard'],
      summary: 'Package count, pending reviews, CVE findings by severity, the 20 latest audit entries',
      response: { 200: SummaryOut, ...errorResponses },
    },
  }, async () => ctx.dashboard.summary());
}
