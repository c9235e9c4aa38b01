import type { AuditLog } from '../adapters/audit/audit-log.js';
import { deleteAuditIndexUpTo } from '../adapters/db/audit.table.js';
import type { Db } from '../adapters/db/index.js';
import type { JobScheduler } from './jobs.js';
import type { SettingsService } from './settings.js';

export interface RetentionReport {
  retention_days: number;
  removed_files: string[];
}

/**
 * Audit day files older than `retention_days` are removed whole (the chain keeps
 * verifying from an anchor), their entries leave the query index, and the run is itself audited.
 * No package is ever removed by retention.
 */
export async function runRetention(deps: { db: Db; audit: AuditLog; settings: SettingsService }, user: string | null, ip: string | null = null): Promise<RetentionReport> {
  const days = await deps.settings.get('retention_days');
  const { files: removed, upToSeq } = await deps.audit.removeOlderThan(days);
  if (upToSeq !== null) await deleteAuditIndexUpTo(deps.db, upToSeq);
  await deps.audit.record({ action: 'RETENTION', user, result: 'SUCCESS', detail: `retention_days=${days}; removed=${removed.join(',') || 'none'}`, ip });
  return { retention_days: days, removed_files: removed };
}

/** The daily retention run, an Enterprise feature like every scheduled job but the expiry of security decisions. */
export function registerRetentionJob(scheduler: JobScheduler, deps: { db: Db; audit: AuditLog; settings: SettingsService }): void {
  scheduler.register({
    name: 'audit_retention',
    timeSetting: 'schedule_retention',
    enterpriseOnly: true,
    run: async () => {
      const report = await runRetention(deps, 'system');
      return `${report.removed_files.length} audit file(s) removed`;
    },
  });
}
