import type { Db } from './index.js';

/**
 * Claims the job's run for the daily slot starting at `slot`: true when its last run is older
 * than the slot (or there is none), and then its last run becomes `now`. The claim is one
 * conditional UPDATE, so of several replicas on one database exactly one gets true per slot.
 */
export async function claimJobSlot(db: Db, job: string, slot: string, now: string): Promise<boolean> {
  await db.insertInto('job_runs').values({ job, last_run_at: null, last_result: null }).onConflict((oc) => oc.column('job').doNothing()).execute();
  const result = await db
    .updateTable('job_runs')
    .set({ last_run_at: now })
    .where('job', '=', job)
    .where((eb) => eb.or([eb('last_run_at', 'is', null), eb('last_run_at', '<', slot)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The outcome of a finished run; `at` becomes the last run only for a job never run before. */
export async function recordJobResult(db: Db, job: string, at: string, result: string): Promise<void> {
  await db
    .insertInto('job_runs')
    .values({ job, last_run_at: at, last_result: result })
    .onConflict((oc) => oc.column('job').doUpdateSet({ last_result: result }))
    .execute();
}
