import { sql, type Insertable, type Selectable } from 'kysely';
import { INDEXED_STATUSES } from '../../domain/distributions.js';
import type { Db } from './index.js';
import type { DistributionsTable } from './schema.js';

export type DistributionRow = Selectable<DistributionsTable>;

/**
 * Marks a distribution's index out of date and returns its new generation. Inside a transaction
 * this also locks the distribution row until commit, so generations are handed out in commit
 * order: a package listed with generation N is committed before any with N+1 becomes visible.
 */
export async function bumpGeneration(db: Db, codename: string): Promise<number> {
  const row = await db
    .updateTable('distributions')
    .set((eb) => ({ generation: eb('generation', '+', 1) }))
    .where('codename', '=', codename)
    .returning('generation')
    .executeTakeFirstOrThrow();
  return Number(row.generation);
}

/** Marks the index out of date like `bumpGeneration`, replacing the description when one is given. */
export async function reinitialiseDistribution(db: Db, codename: string, description: string | null): Promise<void> {
  await db
    .updateTable('distributions')
    .set((eb) => ({ ...(description ? { description } : {}), generation: eb('generation', '+', 1) }))
    .where('codename', '=', codename)
    .execute();
}

export async function listDistributions(db: Db): Promise<DistributionRow[]> {
  return db.selectFrom('distributions').selectAll().execute();
}

export async function distributionCodenames(db: Db): Promise<string[]> {
  return (await db.selectFrom('distributions').select('codename').execute()).map((r) => r.codename);
}

/** Adds the distribution's row unless one exists (another replica may be adding it at the same time). */
export async function insertDistributionIfMissing(db: Db, row: Insertable<DistributionsTable>): Promise<void> {
  await db
    .insertInto('distributions')
    .values(row)
    .onConflict((oc) => oc.column('codename').doNothing())
    .execute();
}

/**
 * What a publish starts from, read in one statement so the parts agree: the generation reached,
 * the one published, and the totals of the indexed rows as of that generation (the count, sum and
 * sum modulo 65521 of their `seq`, kept by triggers, migration 0018; with the highest `seq`,
 * {@link highestIndexedSeq}, they tell cheaply whether the index changed otherwise than by
 * additions). Every change to the totals bumps the generation in the same transaction, and
 * generations are handed out in commit order, so the rows with `seq` up to this generation are
 * exactly the ones these totals count: a publish that reads no further is consistent even while
 * uploads commit around it.
 */
export async function distributionPublishState(db: Db, codename: string): Promise<{ generation: number; published: number; count: number; sum: number; mod: number }> {
  const row = await db
    .selectFrom('distributions')
    .select(['generation', 'published_generation', 'indexed_count', 'indexed_sum', 'indexed_mod'])
    .where('codename', '=', codename)
    .executeTakeFirstOrThrow();
  return {
    generation: Number(row.generation), published: Number(row.published_generation),
    count: Number(row.indexed_count ?? 0), sum: Number(row.indexed_sum ?? 0), mod: Number(row.indexed_mod ?? 0),
  };
}

export async function markDistributionPublished(db: Db, codename: string, generation: number, publishedAt: string): Promise<void> {
  await db
    .updateTable('distributions')
    .set({ published_generation: generation, published_at: publishedAt })
    .where('codename', '=', codename)
    .execute();
}

/**
 * PostgreSQL only, inside a transaction: waits for, then holds until the transaction ends, the
 * lock that lets one replica at a time publish the distribution (replicas share the database).
 */
export async function lockDistributionPublishing(db: Db, codename: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`tollgate:publish:${codename}`}))`.execute(db);
}

/** One page of a distribution's index entries in index order (seq, then id), after the given key. */
/** An index entry as the publisher reads it; `files` only when asked for (APT's Contents). */
export interface IndexEntryRow {
  seq: number;
  id: string;
  index_entry: string;
  component: string;
  arch: string;
  name: string;
  files?: string;
  /** With `files`: when the list arrived (0 at admission, null while pending; migration 0013). */
  listed_generation?: number | null;
}

const ENTRY_COLUMNS = ['seq', 'id', 'index_entry', 'component', 'arch', 'name'] as const;
const WITH_FILES = [...ENTRY_COLUMNS, 'files', 'listed_generation'] as const;

/** `upTo`: only rows listed by that generation (a publish reads no further than the generation it starts from). */
export async function indexEntriesPage(db: Db, codename: string, after: { seq: number; id: string } | null, limit: number, withFiles = false, upTo?: number): Promise<IndexEntryRow[]> {
  let q = db
    .selectFrom('packages')
    .select(withFiles ? WITH_FILES : ENTRY_COLUMNS)
    .where('distribution', '=', codename)
    .where('status', 'in', INDEXED_STATUSES);
  if (upTo !== undefined) q = q.where('seq', '<=', upTo);
  if (after) {
    const { seq, id } = after;
    // `seq >= ?` on its own lets both databases start the page as a range of packages_dist_seq.
    q = q.where('seq', '>=', seq).where((eb) => eb.or([eb('seq', '>', seq), eb('id', '>', id)]));
  }
  return q.orderBy('seq').orderBy('id').limit(limit).execute();
}

/** The index entries of a distribution listed after `seq` and by generation `upTo`, in index order. */
export async function indexEntriesAfter(db: Db, codename: string, seq: number, upTo: number, withFiles = false): Promise<IndexEntryRow[]> {
  return db
    .selectFrom('packages')
    .select(withFiles ? WITH_FILES : ENTRY_COLUMNS)
    .where('distribution', '=', codename)
    .where('status', 'in', INDEXED_STATUSES)
    .where('seq', '>', seq)
    .where('seq', '<=', upTo)
    .orderBy('seq')
    .execute();
}

/**
 * Indexed packages listed up to `seq` whose file list arrived after generation `after` and by
 * generation `upTo`: their Contents lines are what an index published at `after` lacks.
 */
export async function filesListedBetween(db: Db, codename: string, after: number, upTo: number, seq: number): Promise<IndexEntryRow[]> {
  return filesListedBetweenQuery(db, codename, after, upTo, seq).execute();
}

/** The query of {@link filesListedBetween} (its plan is tested). */
export function filesListedBetweenQuery(db: Db, codename: string, after: number, upTo: number, seq: number) {
  return db
    .selectFrom('packages')
    .select(WITH_FILES)
    .where('distribution', '=', codename)
    .where('listed_generation', '>', after)
    .where('listed_generation', '<=', upTo)
    .where('status', 'in', INDEXED_STATUSES)
    // `seq + 0`, not `seq`: SQLite's planner otherwise walks packages(distribution, seq, id) over
    // the whole distribution (seq <= the last one published is every row) and looks each row up;
    // every append runs this, 0.8 s at 200,000 packages. Through packages(distribution,
    // listed_generation) it reads the few rows listed since the last publish, sorted after.
    .where(sql<number>`${sql.ref('seq')} + 0`, '<=', seq)
    .orderBy('seq');
}

/** The highest `seq` among a distribution's indexed packages (by generation `upTo` when given); 0 when none. */
export async function highestIndexedSeq(db: Db, codename: string, upTo?: number): Promise<number> {
  let q = db
    .selectFrom('packages')
    .select('seq')
    .where('distribution', '=', codename)
    .where('status', 'in', INDEXED_STATUSES);
  if (upTo !== undefined) q = q.where('seq', '<=', upTo);
  const top = await q.orderBy('seq', 'desc').limit(1).executeTakeFirst();
  return Number(top?.seq ?? 0);
}

/** Stores an operator's definition (and description); revives a retired distribution. */
export async function saveDistributionDefinition(db: Db, codename: string, definition: string, description: string): Promise<void> {
  await db
    .updateTable('distributions')
    .set((eb) => ({ definition, description, retired_at: null, generation: eb('generation', '+', 1) }))
    .where('codename', '=', codename)
    .execute();
}

export async function markDistributionRetired(db: Db, codename: string, retiredAt: string): Promise<void> {
  await db.updateTable('distributions').set({ retired_at: retiredAt }).where('codename', '=', codename).execute();
}

/** Whether an indexed package of another distribution than `codename` is published at `poolPath`. */
export async function poolPathUsedOutside(db: Db, poolPath: string, codename: string): Promise<boolean> {
  const row = await db
    .selectFrom('packages')
    .select('id')
    .where('pool_path', '=', poolPath)
    .where('distribution', '<>', codename)
    .where('status', 'in', INDEXED_STATUSES)
    .executeTakeFirst();
  return row !== undefined;
}

/** Pool paths the distribution's indexed packages are published at that no other distribution's indexed package uses. */
export async function poolPathsOnlyIn(db: Db, codename: string): Promise<string[]> {
  const rows = await db
    .selectFrom('packages as p')
    .select('p.pool_path')
    .distinct()
    .where('p.distribution', '=', codename)
    .where('p.status', 'in', INDEXED_STATUSES)
    .where(({ not, exists, selectFrom }) =>
      not(exists(
        selectFrom('packages as o')
          .select('o.id')
          .whereRef('o.pool_path', '=', 'p.pool_path')
          .where('o.distribution', '<>', codename)
          .where('o.status', 'in', INDEXED_STATUSES),
      )))
    .execute();
  return rows.map((r) => r.pool_path);
}

/** How many of the distribution's packages are in each component and architecture (any status). */
export async function countPackagesByPlace(db: Db, codename: string): Promise<Array<{ component: string; arch: string; n: number }>> {
  const rows = await db
    .selectFrom('packages')
    .select(['component', 'arch', (eb) => eb.fn.countAll<number>().as('n')])
    .where('distribution', '=', codename)
    .groupBy(['component', 'arch'])
    .execute();
  return rows.map((r) => ({ component: r.component, arch: r.arch, n: Number(r.n) }));
}

/** The distributions whose indexed packages are published at a pool path. */
export async function distributionsPublishing(db: Db, poolPath: string): Promise<string[]> {
  const rows = await db
    .selectFrom('packages')
    .select('distribution')
    .distinct()
    .where('pool_path', '=', poolPath)
    .where('status', 'in', INDEXED_STATUSES)
    .execute();
  return rows.map((r) => r.distribution);
}
