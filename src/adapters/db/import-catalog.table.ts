/**
 * The catalogs of upstream packages, generation by generation (see migration 0007): readers see
 * only each source's current generation, the one its sync state names.
 */
import { CompiledQuery, sql, type Selectable } from 'kysely';
import { INDEXED_STATUSES } from '../../domain/distributions.js';
import type { Db } from './index.js';
import type { ImportCatalogProvidesTable, ImportCatalogTable } from './import-schema.js';

export type CatalogRow = Selectable<ImportCatalogTable>;
/** A catalog package with the name, version and flags under which it provides a looked-up name. */
export type CatalogProviderRow = CatalogRow & { provided_name: string; provided_version: string | null; provided_flags: number | null };

/** Rows per INSERT: 400 catalog rows are 4,800 bind parameters, well under SQLite's and PostgreSQL's limits. */
export const CATALOG_ROWS_PER_INSERT = 400;

const TABLE_COLUMNS = {
  import_catalog: ['source_id', 'generation', 'seq', 'format', 'name', 'version', 'arch', 'location', 'size', 'sha256', 'summary', 'relations'],
  import_catalog_provides: ['source_id', 'generation', 'seq', 'kind', 'name', 'version', 'flags'],
} as const satisfies { import_catalog: ReadonlyArray<keyof ImportCatalogTable>; import_catalog_provides: ReadonlyArray<keyof ImportCatalogProvidesTable> };
export type CatalogTable = keyof typeof TABLE_COLUMNS;

/** Bind values per row of a catalog table. */
export const columnsOf = (table: CatalogTable): number => TABLE_COLUMNS[table].length;

/** Appends one import_catalog row to `values`, in the column order insertCatalogValues expects. */
export function appendCatalogRow(
  values: unknown[], sourceId: string, generation: number, seq: number, format: string, name: string, version: string,
  arch: string, location: string, size: number, sha256: string, summary: string, relations: string,
): void {
  values.push(sourceId, generation, seq, format, name, version, arch, location, size, sha256, summary, relations);
}

/** Appends one import_catalog_provides row to `values`, in the column order insertCatalogValues expects. */
export function appendCatalogProvidesRow(
  values: unknown[], sourceId: string, generation: number, seq: number, kind: string, name: string, version: string | null, flags: number | null,
): void {
  values.push(sourceId, generation, seq, kind, name, version, flags);
}

/** The text of a multi-row INSERT into `table`, built once per table, row count and dialect. */
const insertTexts = new Map<string, string>();
function insertText(db: Db, table: CatalogTable, rows: number): string {
  const pg = isPostgres(db);
  const key = `${table} ${rows} ${pg}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    const columns = TABLE_COLUMNS[table];
    let n = 0;
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) tuples.push(`(${columns.map(() => (pg ? `$${++n}` : '?')).join(', ')})`);
    text = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${tuples.join(', ')}`;
    if (insertTexts.size > 64) insertTexts.clear();
    insertTexts.set(key, text);
  }
  return text;
}

/**
 * Inserts rows given as flat bind values (appendCatalogRow, appendCatalogProvidesRow), at most
 * CATALOG_ROWS_PER_INSERT per statement. The statement's text is made once per size: building
 * and compiling each 400-row INSERT with the query builder was a good part of a sync's time and
 * of the garbage that raised its peak memory.
 */
export async function insertCatalogValues(db: Db, table: CatalogTable, values: readonly unknown[]): Promise<void> {
  const width = TABLE_COLUMNS[table].length;
  if (values.length % width !== 0) throw new Error(`${table}: ${values.length} values are not whole rows of ${width}`);
  const step = CATALOG_ROWS_PER_INSERT * width;
  for (let i = 0; i < values.length; i += step) {
    const part = i === 0 && values.length <= step ? values : values.slice(i, i + step);
    await db.executeQuery(CompiledQuery.raw(insertText(db, table, part.length / width), part as unknown[]));
  }
}

/**
 * PostgreSQL: refreshes the planner's statistics of the catalog tables once a generation is in
 * place. Until autovacuum gets to it, the statistics describe the previous generation (or an empty
 * table), so the planner expects no row of the new one and reads every row of the source for each
 * look-up (resolves took ~1 s instead of tens of ms right after a sync). SQLite keeps no statistics.
 */
export async function refreshCatalogStatistics(db: Db): Promise<void> {
  if (isPostgres(db)) await sql`analyze import_catalog, import_catalog_provides`.execute(db);
}

/** Drops every generation of the source's catalog but `keep`. */
export async function dropCatalogGenerationsExcept(db: Db, sourceId: string, keep: number): Promise<void> {
  await db.deleteFrom('import_catalog_provides').where('source_id', '=', sourceId).where('generation', '!=', keep).execute();
  await db.deleteFrom('import_catalog').where('source_id', '=', sourceId).where('generation', '!=', keep).execute();
}

export async function dropCatalogGeneration(db: Db, sourceId: string, generation: number): Promise<void> {
  await db.deleteFrom('import_catalog_provides').where('source_id', '=', sourceId).where('generation', '=', generation).execute();
  await db.deleteFrom('import_catalog').where('source_id', '=', sourceId).where('generation', '=', generation).execute();
}

/** Per-source generation in use (sources never synced have none), of all sources or of `sourceIds`. */
export async function currentGenerations(db: Db, sourceIds?: string[]): Promise<Map<string, number>> {
  let query = db.selectFrom('import_sync_state').select(['source_id', 'generation']).where('generation', '>', 0);
  if (sourceIds) query = query.where('source_id', 'in', sourceIds.length ? sourceIds : ['']);
  const rows = await query.execute();
  return new Map(rows.map((r) => [r.source_id, Number(r.generation)]));
}

/** How many packages one source generation holds (a sync numbers them from 0): one primary-key read. */
export async function catalogSize(db: Db, sourceId: string, generation: number): Promise<number> {
  const last = await db.selectFrom('import_catalog').select((eb) => eb.fn.max('seq').as('seq'))
    .where('source_id', '=', sourceId).where('generation', '=', generation).executeTakeFirst();
  return last?.seq === null || last?.seq === undefined ? 0 : Number(last.seq) + 1;
}

/** The names of up to `count` of the `size` packages of one source generation, spread evenly over it by seq. */
export async function spreadCatalogNames(db: Db, sourceId: string, generation: number, size: number, count: number): Promise<string[]> {
  const n = Math.min(count, size);
  if (n <= 0) return [];
  const step = size / n;
  const seqs = Array.from({ length: n }, (_, i) => Math.floor(i * step + step / 2));
  const rows = await db.selectFrom('import_catalog').select('name')
    .where('source_id', '=', sourceId).where('generation', '=', generation).where('seq', 'in', seqs).orderBy('seq').execute();
  return rows.map((r) => r.name);
}

/**
 * A page of the packages of the given generations whose lower-cased name contains `needle`
 * (lower-case), exact matches first, and how many match. `generations` must not be empty.
 */
export async function searchCatalog(
  db: Db,
  generations: ReadonlyMap<string, number>,
  needle: string,
  page: { page: number; perPage: number },
): Promise<{ total: number; rows: CatalogRow[] }> {
  const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const base = () => db.selectFrom('import_catalog').where((eb) => eb.or(
    [...generations].map(([id, generation]) => eb.and([eb('source_id', '=', id), eb('generation', '=', generation)])),
  )).where(sql<boolean>`lower(name) like ${pattern} escape '\\'`);
  const total = Number((await base().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst())?.n ?? 0);
  const rows = await base()
    .selectAll()
    .orderBy((eb) => eb.case().when(eb.fn('lower', ['name']), '=', needle).then(0).else(1).end())
    .orderBy('name')
    .orderBy('source_id')
    .orderBy('seq')
    .limit(page.perPage)
    .offset((page.page - 1) * page.perPage)
    .execute();
  return { total, rows };
}

/** Whether `db` speaks PostgreSQL (numbered placeholders) rather than SQLite; known per instance. */
const postgres = new WeakMap<Db, boolean>();
function isPostgres(db: Db): boolean {
  let known = postgres.get(db);
  if (known === undefined) {
    known = db.selectFrom('import_catalog').select('name').where('name', '=', '').compile().sql.includes('$1');
    postgres.set(db, known);
  }
  return known;
}

/**
 * `column` is one of `names`, the list bound as ONE parameter (SQLite: a JSON array read by
 * json_each; PostgreSQL: a text[]): the statement stays small and quick to prepare whatever the
 * number of names, and the index on the column still serves each name.
 */
function oneOf(db: Db, column: string, names: readonly string[]) {
  return isPostgres(db)
    ? sql<boolean>`${sql.ref(column)} = any(${[...names]}::text[])`
    : sql<boolean>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(names)}))`;
}

/** A catalog package found by {@link catalogLookup}: by its own name (provided_* null), or as a provider of provided_name. */
export interface CatalogLookupRow extends Omit<CatalogRow, 'source_id' | 'generation'> {
  provided_name: string | null;
  provided_version: string | null;
  provided_flags: number | null;
}

/**
 * The packages of one source generation named one of `names` and those providing one of them
 * (a Provides, or an RPM file path), in one statement whatever the number of names; both halves
 * are served by their (source_id, generation, name) index. Rows of a name come in catalog order.
 */
export async function catalogLookup(db: Db, sourceId: string, generation: number, names: readonly string[]): Promise<CatalogLookupRow[]> {
  if (names.length === 0) return [];
  const { rows } = await sql<CatalogLookupRow>`
    select c.seq, c.format, c.name, c.version, c.arch, c.location, c.size, c.sha256, c.summary, c.relations,
      cast(null as text) as provided_name, cast(null as text) as provided_version, cast(null as integer) as provided_flags
    from import_catalog c
    where c.source_id = ${sourceId} and c.generation = ${generation} and ${oneOf(db, 'c.name', names)}
    union all
    select c.seq, c.format, c.name, c.version, c.arch, c.location, c.size, c.sha256, c.summary, c.relations,
      p.name, p.version, p.flags
    from import_catalog_provides p
    join import_catalog c on c.source_id = p.source_id and c.generation = p.generation and c.seq = p.seq
    where p.source_id = ${sourceId} and p.generation = ${generation} and ${oneOf(db, 'p.name', names)}`.execute(db);
  return rows;
}

/** The packages of one source generation named one of `names` (served by the (source_id, generation, name) index). */
export function catalogPackagesNamed(db: Db, sourceId: string, generation: number, names: readonly string[]): Promise<CatalogRow[]> {
  return db.selectFrom('import_catalog').selectAll()
    .where('source_id', '=', sourceId).where('generation', '=', generation).where('name', 'in', names).execute();
}

/** The packages of one source generation that provide one of `names` (a Provides, or an RPM file path). */
export function catalogProvidersOf(db: Db, sourceId: string, generation: number, names: readonly string[]): Promise<CatalogProviderRow[]> {
  return db
    .selectFrom('import_catalog_provides as p')
    .innerJoin('import_catalog as c', (join) => join.onRef('c.source_id', '=', 'p.source_id').onRef('c.generation', '=', 'p.generation').onRef('c.seq', '=', 'p.seq'))
    .selectAll('c')
    .select(['p.name as provided_name', 'p.version as provided_version', 'p.flags as provided_flags'])
    .where('p.source_id', '=', sourceId)
    .where('p.generation', '=', generation)
    .where('p.name', 'in', names)
    .execute();
}

/**
 * Whether the distribution publishes anything a dependency could be met by: some package_provides
 * row of an indexed package (the rows packages.table's findProvidersOf answers from). When none,
 * a resolution for it skips its target look-ups.
 */
export async function distributionProvidesAnything(db: Db, codename: string): Promise<boolean> {
  const row = await db
    .selectFrom('package_provides as pp')
    .innerJoin('packages as p', 'p.id', 'pp.package_id')
    .select('pp.name')
    .where('pp.distribution', '=', codename)
    .where('p.status', 'in', INDEXED_STATUSES)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Up to `limit` packages of one source generation from seq `fromSeq` on, in seq order (the primary key's). */
export function catalogPackagesFrom(db: Db, sourceId: string, generation: number, fromSeq: number, limit: number): Promise<Array<Omit<CatalogRow, 'source_id' | 'generation'>>> {
  return db.selectFrom('import_catalog')
    .select(['seq', 'format', 'name', 'version', 'arch', 'location', 'size', 'sha256', 'summary', 'relations'])
    .where('source_id', '=', sourceId).where('generation', '=', generation).where('seq', '>=', fromSeq)
    .orderBy('seq').limit(limit).execute();
}

export interface CatalogProvidedRow {
  seq: number;
  name: string;
  version: string | null;
  flags: number | null;
}

/**
 * The provides rows of one source generation after (`after.name`, `after.seq`), in that order,
 * about `limit` at a time: pages walk the (source_id, generation, name) index. A package may
 * provide one name several times (RPM `bundled(x) = 1` and `= 2`), so a full page gives back its
 * last (name, seq) group whole in the next one rather than splitting it.
 */
export async function catalogProvidedAfter(db: Db, sourceId: string, generation: number, after: { name: string; seq: number } | null, limit: number): Promise<CatalogProvidedRow[]> {
  const rows = db.selectFrom('import_catalog_provides').select(['seq', 'name', 'version', 'flags'])
    .where('source_id', '=', sourceId).where('generation', '=', generation);
  const page = await (after ? rows.where(sql<boolean>`(name, seq) > (${after.name}, ${after.seq})`) : rows)
    .orderBy('name').orderBy('seq').limit(limit).execute();
  if (page.length < limit) return page;
  const last = page[page.length - 1]!;
  let end = page.length - 1;
  while (end > 0 && page[end - 1]!.name === last.name && page[end - 1]!.seq === last.seq) end--;
  // A group filling the whole page: that group alone, whatever its size.
  return end > 0 ? page.slice(0, end) : rows.where('name', '=', last.name).where('seq', '=', last.seq).execute();
}
