/**
 * Security decision records: one per package name, version and arch (every distribution holding
 * that version shares it), replaced by each new decision. `cve_ids` and `covered_cve_ids` are
 * JSON arrays.
 */
import type { Insertable, Selectable } from 'kysely';
import type { Db } from './index.js';
import type { PackagesTable, SecurityDecisionsTable } from './schema.js';

export type DecisionRow = Selectable<SecurityDecisionsTable>;
export type NewDecision = Insertable<SecurityDecisionsTable>;

export async function findDecision(db: Db, name: string, version: string, arch: string): Promise<DecisionRow | undefined> {
  return db.selectFrom('security_decisions').selectAll().where('name', '=', name).where('version', '=', version).where('arch', '=', arch).executeTakeFirst();
}

/** Where `findDecisionsFor` answers a name/version/arch's record. */
export const decisionKey = (p: { name: string; version: string; arch: string }) => `${p.name} ${p.version} ${p.arch}`;

/** The decision records of these name/version/arch, by `decisionKey` (one query over their names). */
export async function findDecisionsFor(db: Db, packages: ReadonlyArray<{ name: string; version: string; arch: string }>): Promise<Map<string, DecisionRow>> {
  const found = new Map<string, DecisionRow>();
  if (packages.length === 0) return found;
  const wanted = new Set(packages.map(decisionKey));
  const rows = await db.selectFrom('security_decisions').selectAll().where('name', 'in', [...new Set(packages.map((p) => p.name))]).execute();
  for (const row of rows) if (wanted.has(decisionKey(row))) found.set(decisionKey(row), row);
  return found;
}

/** Store the decision of a name/version/arch, replacing the previous one. */
export async function upsertDecision(db: Db, decision: NewDecision): Promise<void> {
  const { name: _name, version: _version, arch: _arch, ...updatable } = decision;
  await db
    .insertInto('security_decisions')
    .values(decision)
    .onConflict((oc) => oc.columns(['name', 'version', 'arch']).doUpdateSet(updatable))
    .execute();
}

/** Accepted risks and exceptions whose decision has an expiry date, with that date. */
export async function findExpiringAcceptances(db: Db): Promise<Array<Selectable<PackagesTable> & { decision_expires_at: string | null }>> {
  return db
    .selectFrom('packages as p')
    .innerJoin('security_decisions as d', (join) => join.onRef('d.name', '=', 'p.name').onRef('d.version', '=', 'p.version').onRef('d.arch', '=', 'p.arch'))
    .selectAll('p')
    .select('d.expires_at as decision_expires_at')
    .where('p.status', 'in', ['accepted_risk', 'exception'])
    .where('d.expires_at', 'is not', null)
    .execute();
}
