/**
 * When the antivirus signatures were last updated through Tollgate: kept in `job_runs` under its
 * own key, beside the scheduled jobs' last runs.
 */
import type { Db } from './index.js';

const SIGNATURE_UPDATE_JOB = 'clamav_update';

export async function findLastSignatureUpdate(db: Db): Promise<string | null> {
  const row = await db.selectFrom('job_runs').select('last_run_at').where('job', '=', SIGNATURE_UPDATE_JOB).executeTakeFirst();
  return row?.last_run_at ?? null;
}

export async function recordSignatureUpdate(db: Db, at: string): Promise<void> {
  await db
    .insertInto('job_runs')
    .values({ job: SIGNATURE_UPDATE_JOB, last_run_at: at, last_result: 'ok' })
    .onConflict((oc) => oc.column('job').doUpdateSet({ last_run_at: at, last_result: 'ok' }))
    .execute();
}
