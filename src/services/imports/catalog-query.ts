/**
 * Reading the synced catalogs: search, and dependency resolution against the catalogs of the
 * sources mapped to a distribution, skipping what that distribution already publishes; and what
 * the catalogs offer to the upload dependency check.
 * Only each source's current generation is visible. Resolution reads it from memory when it is
 * held there (resident-catalogs.ts), else from the database.
 */
import { setImmediate } from 'node:timers/promises';
import type { Db } from '../../adapters/db/index.js';
import {
  catalogLookup, catalogPackagesNamed, type CatalogLookupRow, catalogProvidersOf, currentGenerations, distributionProvidesAnything, searchCatalog, catalogSize, spreadCatalogNames, type CatalogRow,
} from '../../adapters/db/import-catalog.table.js';
import { importSourceNames } from '../../adapters/db/import-sources.table.js';
import { acceptedArchitectures, findDistribution } from '../../domain/distributions.js';
import { DomainError } from '../../domain/errors.js';
import { forEachProvidedName, type CatalogEntry, type DebCatalogRelations } from '../../domain/imports/catalog.js';
import { PackedCatalogBuilder, type CatalogRecord, type PackedCatalog } from '../../domain/imports/packed-catalog.js';
import { debWarmUpCatalog, rpmWarmUpCatalog } from '../../domain/imports/warm-up-catalog.js';
import { resolveClosure, type CatalogPackage, type Closure, type ResolverFormat } from '../../domain/imports/resolve.js';
import { debFormat, exerciseParsers, rpmFormat, type LoadedName, type NameLookups } from '../../domain/imports/resolve-formats.js';
import { compareDebianVersions } from '../../domain/deb/version.js';
import { Sense } from '../../domain/rpm/tags.js';
import { compareEvr, parseEvr } from '../../domain/rpm/vercmp.js';
import type { ProvidesLookup } from '../formats/types.js';
import { providesLookup } from '../packages/provides.js';
import { CatalogCache, type NameAnswer, type SourceAnswers } from './catalog-cache.js';
import { ResidentCatalogs } from './resident-catalogs.js';

export const catalogEmpty = () =>
  new DomainError('invalid', 'catalog_empty', 'No import catalog yet: add a source and synchronise it (POST /import/sync)');

export interface CatalogItem {
  name: string;
  package: string;
  version: string;
  arch: string;
  format: string;
  summary: string;
  size: number;
  sha256: string;
  filename: string;
  source_id: string;
  source: string;
  distribution: string;
}

interface Visible {
  generations: Map<string, number>;
  sources: Map<string, { name: string; distribution: string }>;
}

export class CatalogQuery {
  private readonly cache = new CatalogCache();

  constructor(
    private readonly db: Db,
    /** The current generations held in memory (none when not given). */
    readonly resident: ResidentCatalogs = new ResidentCatalogs(db, { budget: 0 }),
  ) {}

  private async visible(filter: { sourceId?: string; distribution?: string } = {}): Promise<Visible> {
    const rows = await importSourceNames(this.db, filter);
    const generations = await currentGenerations(this.db, rows.map((r) => r.id));
    return { generations, sources: new Map(rows.map((r) => [r.id, { name: r.name, distribution: r.distribution }])) };
  }

  /** Packages whose name contains `q` (exact matches first); catalog_empty when nothing was synced. */
  async search(q: string, page: number, perPage: number, sourceId?: string): Promise<{ items: CatalogItem[]; total: number }> {
    const visible = await this.visible({ sourceId });
    if (visible.generations.size === 0) throw catalogEmpty();
    const needle = q.trim().toLowerCase();
    const { total, rows } = await searchCatalog(this.db, visible.generations, needle, { page, perPage });
    return { total, items: rows.map((r) => this.item(r, visible)) };
  }

  private item(r: CatalogRow, visible: Visible): CatalogItem {
    const source = visible.sources.get(r.source_id);
    return {
      name: r.name, package: r.name, version: r.version, arch: r.arch, format: r.format, summary: r.summary,
      size: Number(r.size), sha256: r.sha256, filename: r.location, source_id: r.source_id,
      source: source?.name ?? '', distribution: source?.distribution ?? '',
    };
  }

  /** The dependency closure of `name` for `distribution` (404 unknown, 424 no catalog). */
  async resolve(name: string, options: { distribution?: string; arch?: string; version?: string }): Promise<{ distribution: string; root: CatalogPackage; closure: Closure; sources: Visible['sources'] }> {
    const distribution = await this.pickDistribution(name, options.distribution);
    const dist = findDistribution(distribution);
    if (!dist) throw new DomainError('not_found', 'unknown_distribution', `Unknown distribution ${distribution}`);
    const visible = await this.visible({ distribution });
    if (visible.generations.size === 0) throw catalogEmpty();
    const accepted = options.arch ? [options.arch, dist.format === 'deb' ? 'all' : 'noarch'] : acceptedArchitectures(dist);
    const lookups = this.lookups(visible, distribution);
    const order = dist.format === 'deb' ? compareDebianVersions : (a: string, b: string) => compareEvr(parseEvr(a), parseEvr(b));
    const roots = (await lookups.byName(name)).filter((p) => accepted.includes(p.arch) && (!options.version || p.version === options.version));
    roots.sort((a, b) => order(b.version, a.version));
    const root = roots[0];
    if (!root) {
      const what = options.version ? `${name} ${options.version}` : name;
      throw new DomainError('not_found', 'package_not_found', `${what} is not in the catalogs of ${distribution}`);
    }
    return { distribution, root, closure: await resolveClosure(root, resolverFormat(dist.format, lookups, accepted)), sources: visible.sources };
  }

  /**
   * What the synced catalogs of a distribution's sources offer, as rows the upload dependency
   * check reads like published ones (null when no source of the distribution has a catalog).
   */
  async providesLookup(distribution: string): Promise<ProvidesLookup | null> {
    const visible = await this.visible({ distribution });
    if (visible.generations.size === 0) return null;
    return async (names) => {
      const rows: Awaited<ReturnType<ProvidesLookup>> = [];
      for (let i = 0; i < names.length; i += 500) {
        const chunk = names.slice(i, i + 500);
        for (const [sourceId, generation] of visible.generations) {
          for (const r of await catalogPackagesNamed(this.db, sourceId, generation, chunk)) {
            const pkg = toPackage(sourceId, r);
            const identity = { package: pkg.name, packageVersion: pkg.version, arch: pkg.arch, multiArch: multiArchOf(pkg) };
            // An RPM provides itself at its exact EVR; a deb is found by its name.
            rows.push(pkg.format === 'rpm' ? { kind: 'provides', name: pkg.name, version: pkg.version, flags: Sense.EQUAL, ...identity } : { kind: 'package', name: pkg.name, version: pkg.version, flags: null, ...identity });
          }
          for (const r of await catalogProvidersOf(this.db, sourceId, generation, chunk)) {
            const pkg = toPackage(sourceId, r);
            rows.push({
              kind: pkg.format === 'rpm' && r.provided_name.startsWith('/') ? 'file' : 'provides',
              name: r.provided_name, version: r.provided_version, flags: r.provided_flags === null ? null : Number(r.provided_flags),
              package: pkg.name, packageVersion: pkg.version, arch: pkg.arch, multiArch: multiArchOf(pkg),
            });
          }
        }
      }
      return rows;
    };
  }

  /** Without a distribution given, the one whose sources list the package (the first, by name). */
  private async pickDistribution(name: string, given?: string): Promise<string> {
    if (given) return given;
    const visible = await this.visible();
    if (visible.generations.size === 0) throw catalogEmpty();
    const lookups = this.lookups(visible, '');
    const found = await lookups.byName(name);
    const dists = [...new Set(found.map((p) => visible.sources.get(p.sourceId)?.distribution ?? ''))].filter(Boolean).sort();
    if (dists.length === 0) throw new DomainError('not_found', 'package_not_found', `${name} is not in any import catalog`);
    return dists[0]!;
  }

  /**
   * Holds the current generation of `sourceId`'s catalog in memory (of every source's when not
   * given), within the memory budget; drops what is held of deleted sources.
   */
  async holdInMemory(sourceId?: string): Promise<void> {
    const visible = await this.visible();
    this.resident.keepOnly(visible.sources.keys());
    for (const [id, generation] of visible.generations) if (!sourceId || id === sourceId) await this.resident.load(id, generation);
  }

  /**
   * Has V8 compile the resolver before a user's first resolution: cold, a large closure's walk
   * took 3-4 times as long. First, each catalog of `own.from` packages or more has a few of
   * its own packages resolved (spread evenly over it, through the usual look-ups, with a
   * throwaway cache); then the walk runs a few rounds over a made-up catalog
   * (domain/imports/warm-up-catalog.ts), packed as a synced one is held in memory, through the
   * same look-ups. The made-up rounds alone left code compiled for rows, relations and provides
   * shaped unlike the real ones, which the first real resolution threw away (`--trace-deopt`:
   * the walk, the look-ups and the relation checks deoptimised on texlive-full, and kde-full then
   * ran while they were compiled again); run on real rows first, the feedback the compilers use
   * covers both. Made-up rows read from the database shape (rather than packed) trained code the
   * held catalogs do not run: kde-full's first resolution took 42-55 ms instead of 27-37.
   * Leaves the catalog cache as it was. `own.from`: the smallest catalog whose packages are
   * resolved (none when not given); `own.sourceId`: that source's alone (after its sync).
   * Resolves to the time it took and the catalog packages it resolved.
   */
  async warmUp(rounds = WARM_UP_ROUNDS, own: { from?: number; sourceId?: string } = {}): Promise<{ ms: number; catalogRoots: number }> {
    const started = performance.now();
    const catalogRoots = own.from === undefined ? 0 : await this.warmUpOnCatalogs(own.from, own.sourceId);
    const visible: Visible = { generations: new Map([['warm-up', 1]]), sources: new Map() };
    const deb = debWarmUpCatalog(WARM_UP_PACKAGES);
    const fields = deb.flatMap((e) => (e.relations as DebCatalogRelations).depends ?? []);
    const versions = deb.map((e) => e.version);
    const catalogs = [
      { packed: packEntries(deb), accepted: ['amd64', 'all'] },
      { packed: packEntries(rpmWarmUpCatalog(WARM_UP_PACKAGES)), accepted: ['x86_64', 'noarch'] },
    ];
    for (let round = 0; round < rounds; round++) {
      exerciseParsers(fields, versions);
      // The formats take turns, so the compiled walk expects both from the start (not one, then deoptimised for the other).
      for (const { packed, accepted } of catalogs) {
        // A fresh cache each round: the look-ups, the loading and the parsing are what must warm up.
        const lookups = this.lookups(visible, '', packed, new CatalogCache());
        const root = (await lookups.byName('warm-0'))[0]!;
        await resolveClosure(root, resolverFormat(root.format, lookups, accepted));
        // Between warm-up resolutions, so requests arriving meanwhile wait for one of them at most.
        await setImmediate();
      }
    }
    return { ms: performance.now() - started, catalogRoots };
  }

  /**
   * The catalog half of warmUp: CATALOG_WARM_UP_ROOTS closures shared among the catalogs of
   * `minPackages` or more (at least MIN_ROOTS_PER_CATALOG each), as their distributions resolve.
   */
  private async warmUpOnCatalogs(minPackages: number, sourceId?: string): Promise<number> {
    const visible = await this.visible(sourceId ? { sourceId } : {});
    const large: Array<{ sourceId: string; generation: number; size: number }> = [];
    for (const [id, generation] of visible.generations) {
      const size = await catalogSize(this.db, id, generation);
      if (size >= minPackages) large.push({ sourceId: id, generation, size });
    }
    const perCatalog = Math.max(MIN_ROOTS_PER_CATALOG, Math.ceil(CATALOG_WARM_UP_ROOTS / large.length));
    let resolved = 0;
    for (const { sourceId: id, generation, size } of large) {
      const source = visible.sources.get(id)!;
      const dist = findDistribution(source.distribution);
      if (!dist) continue;
      const accepted = acceptedArchitectures(dist);
      const only: Visible = { generations: new Map([[id, generation]]), sources: new Map([[id, source]]) };
      for (const name of await spreadCatalogNames(this.db, id, generation, size, perCatalog)) {
        const lookups = this.lookups(only, source.distribution, undefined, new CatalogCache());
        const root = (await lookups.byName(name)).find((p) => accepted.includes(p.arch));
        if (!root) continue;
        await resolveClosure(root, resolverFormat(dist.format, lookups, accepted));
        resolved += 1;
        // Between warm-up resolutions, so requests arriving meanwhile wait for one of them at most.
        await setImmediate();
      }
    }
    return resolved;
  }

  /**
   * Memoised look-ups for one resolution; `prefetch` fills them for many names per query. The
   * catalog's answers come from `packed` when given (for every source), else from the generation
   * held in memory, else from the database.
   */
  private lookups(visible: Visible, distribution: string, packed?: PackedCatalog, cache: CatalogCache = this.cache): NameLookups {
    const target = distribution ? providesLookup(this.db, distribution) : null;
    const loaded = new Map<string, LoadedName>();
    let targetHasRows: Promise<boolean> | undefined;

    const load = async (names: string[]): Promise<void> => {
      const missing: string[] = [];
      for (let i = 0; i < names.length; i++) {
        const name = names[i]!;
        if (loaded.has(name)) continue;
        loaded.set(name, { byName: [], providers: [], target: [] });
        missing.push(name);
      }
      if (missing.length === 0) return;
      for (const [sourceId, generation] of visible.generations) {
        const known = cache.source(sourceId, generation);
        const unknown = missing.filter((name) => !known.names.has(name));
        if (unknown.length > 0) {
          const held = packed ?? this.resident.get(sourceId, generation);
          if (held) answerFromMemory(held, sourceId, known, unknown);
          // One query per source and generation for all the names, so the (source_id, generation, name) indexes apply.
          else answerFromRows(await catalogLookup(this.db, sourceId, generation, unknown), sourceId, known, unknown);
          cache.grew(known);
        }
        for (let i = 0; i < missing.length; i++) {
          const name = missing[i]!;
          const answer = known.names.get(name)!;
          const entry = loaded.get(name)!;
          if (answer.byName.length > 0) entry.byName.push(...answer.byName);
          if (answer.providers.length > 0) entry.providers.push(...answer.providers);
        }
      }
      // A distribution that publishes nothing (as when it only receives imports) answers no target look-up.
      targetHasRows ??= target ? distributionProvidesAnything(this.db, distribution) : Promise.resolve(false);
      if (target && (await targetHasRows)) {
        for (let i = 0; i < missing.length; i += 500) {
          for (const r of await target(missing.slice(i, i + 500))) loaded.get(r.name)?.target.push(r);
        }
      }
    };
    const entry = async (name: string): Promise<LoadedName> => {
      if (!loaded.has(name)) await load([name]);
      return loaded.get(name)!;
    };
    return {
      byName: async (name) => (await entry(name)).byName,
      providers: async (name) => (await entry(name)).providers,
      target: async (name) => (await entry(name)).target,
      prefetch: load,
      loaded: (name) => loaded.get(name),
    };
  }
}

/** Records in `known` what the rows of a catalog look-up answer for `names`. */
function answerFromRows(rows: CatalogLookupRow[], sourceId: string, known: SourceAnswers, names: readonly string[]): void {
  const found = new Map<string, NameAnswer>();
  for (const name of names) found.set(name, { byName: [], providers: [] });
  for (const r of rows) {
    // A package found under several names (its own, what it provides) is one object, parsed once.
    let pkg = known.packages.get(r.seq);
    if (!pkg) known.packages.set(r.seq, (pkg = toPackage(sourceId, r)));
    if (r.provided_name === null) found.get(r.name)!.byName.push(pkg);
    else found.get(r.provided_name)!.providers.push({ pkg, version: r.provided_version, flags: r.provided_flags === null ? null : Number(r.provided_flags) });
  }
  found.forEach((answer, name) => known.names.set(name, answer));
}

/** Records in `known` what the generation held in memory answers for `names`. */
function answerFromMemory(packed: PackedCatalog, sourceId: string, known: SourceAnswers, names: readonly string[]): void {
  const packageAt = (seq: number): CatalogPackage => {
    let pkg = known.packages.get(seq);
    if (!pkg) known.packages.set(seq, (pkg = toPackage(sourceId, packed.record(seq))));
    return pkg;
  };
  for (const name of names) {
    const answer: NameAnswer = { byName: [], providers: [] };
    packed.visit(name, (seq) => answer.byName.push(packageAt(seq)), (seq, version, flags) => answer.providers.push({ pkg: packageAt(seq), version, flags }));
    known.names.set(name, answer);
  }
}

/**
 * Measured on bookworm's texlive-full, kde-full and gnome: 600 packages x 8 rounds warmed no
 * better than 400 x 8, and left ~10 MiB more of V8's old space committed; 300 x 6 warmed less.
 */
const WARM_UP_PACKAGES = 400;
const WARM_UP_ROUNDS = 8;
/**
 * Catalog packages resolved before the made-up rounds, shared among the large catalogs. Measured
 * on bookworm main (63,440 packages; ~0.1 s of the warm-up): 16 warmed texlive-full's and
 * kde-full's first resolutions more than 4 did, 8 in between. The compiled code serves every
 * catalog of a format, so many catalogs share the 16 (each still gets a few: its rows may be
 * RPM's, or differ).
 */
const CATALOG_WARM_UP_ROOTS = 16;
const MIN_ROOTS_PER_CATALOG = 4;

/** The made-up entries packed as a sync packs a catalog (the provides as it writes them). */
function packEntries(entries: CatalogEntry[]): PackedCatalog {
  const builder = new PackedCatalogBuilder();
  entries.forEach((e, seq) => {
    builder.add(seq, e.format, e.name, e.version, e.arch, e.location, e.size, e.sha256, e.summary, JSON.stringify(e.relations));
    forEachProvidedName(e, (_kind, name, version, flags) => builder.addProvided(seq, name, version, flags));
  });
  return builder.finish();
}

/** The walk's rules for a catalog's format, over these look-ups. */
const resolverFormat = (format: CatalogEntry['format'], lookups: NameLookups, accepted: readonly string[]): ResolverFormat<unknown> =>
  (format === 'deb' ? debFormat(lookups, accepted) : rpmFormat(lookups, accepted)) as ResolverFormat<unknown>;

const multiArchOf = (pkg: CatalogPackage): string | null => (pkg.format === 'deb' ? (pkg.relations as DebCatalogRelations).multiArch : null);

function toPackage(sourceId: string, r: CatalogRecord): CatalogPackage {
  return {
    sourceId, format: r.format as CatalogEntry['format'], name: r.name, version: r.version, arch: r.arch,
    location: r.location, size: Number(r.size), sha256: r.sha256, summary: r.summary, relations: JSON.parse(r.relations) as CatalogEntry['relations'],
  };
}
