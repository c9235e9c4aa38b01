/**
 * SBOMs: one package version, a whole distribution (streamed from one pass of keyset pages,
 * the later JSON arrays spooled compressed meanwhile), a preview, and the distribution's findings
 * as SARIF.
 */
import { randomUUID } from 'node:crypto';
import { decisionKey } from '../../adapters/db/decisions.table.js';
import type { Db } from '../../adapters/db/index.js';
import {
  findIdsOfPackagesWithFindings, findIndexedProvidersOf, findIndexedSbomPage, findIndexedSbomRowsAfter, findIndexedSbomRowsByName, findSbomRowsByIds,
  findSbomRowsOfVersion, type SbomRow,
} from '../../adapters/db/sbom.table.js';
import { findDistribution, isIndexed, type Distribution } from '../../domain/distributions.js';
import { DomainError } from '../../domain/errors.js';
import { cyclonedxPlan } from '../../domain/sbom/cyclonedx.js';
import type { DocumentPlan, SbomMeta, SbomPackage } from '../../domain/sbom/model.js';
import { sarifLog, type SarifPackage } from '../../domain/sbom/sarif.js';
import { spdxPlan } from '../../domain/sbom/spdx.js';
import { documentText } from '../../domain/sbom/stream.js';
import { severityRank, type Severity } from '../../domain/security/types.js';
import type { PackageFiles } from '../../adapters/storage/interfaces.js';
import { providesLookup } from '../packages/provides.js';
import { InventoryStore, SCANNER_VERSION } from './inventory.js';
import { decisionsFor, dependsOn, neededNames, pageDecision, refOf, sbomPackage, type ProviderMap } from './model.js';
import { deflatedSpool } from './spool.js';

export type SbomFormat = 'cyclonedx' | 'spdx';

/** A document ready to send: its download name and its text (or its UTF-8 bytes), produced piece by piece. */
export interface SbomDocument {
  filename: string;
  body: AsyncIterable<string | Uint8Array>;
}

/** Rows per query when the SARIF log reads packages by id. */
const BATCH = 100;
/**
 * Rows per keyset page of an export (two queries a page: the rows, their dependencies' providers).
 * A page's rows, parsed inventories and packages must die young: at 500 rows they outlived V8's
 * nursery and dead pages piled up in old space between full collections (a 50,000-package export
 * took the service from 258 to 535 MiB resident); at 100 they mostly do not (bench/sbom.ts).
 */
const PAGE = 100;
/** Names per providers query (SQLite allows 32,766 parameters; a page's packages may need thousands). */
const NAMES_PER_QUERY = 1000;
const EXTENSION: Record<SbomFormat, string> = { cyclonedx: 'cdx.json', spdx: 'spdx.json' };
const safeName = (text: string) => text.replace(/[^A-Za-z0-9._+-]+/g, '_');

export class SbomService {
  private readonly inventories: InventoryStore;

  constructor(
    private readonly db: Db,
    files: PackageFiles,
    private readonly options: { toolVersion: string; appUrl: string },
  ) {
    this.inventories = new InventoryStore(db, files);
  }

  private meta(subject: SbomMeta['subject']): SbomMeta {
    return { subject, timestamp: new Date().toISOString(), serial: randomUUID(), toolVersion: this.options.toolVersion, namespaceBase: this.options.appUrl };
  }

  private plan(format: SbomFormat, meta: SbomMeta, root: SbomPackage | null): DocumentPlan {
    return format === 'spdx' ? spdxPlan(meta, root) : cyclonedxPlan(meta, root);
  }

  private distribution(codename: string): Distribution {
    const dist = findDistribution(codename);
    if (!dist) throw new DomainError('not_found', 'unknown_distribution', `Unknown distribution ${codename}`);
    return dist;
  }

  /** Full packages (inventory, findings, decision, edges) for a batch of rows. */
  private async complete(rows: readonly SbomRow[], providers: ProviderMap): Promise<SbomPackage[]> {
    const [inventories, decisions] = await Promise.all([this.inventories.forRows(rows), decisionsFor(this.db, rows)]);
    return rows.map((row) => {
      const ref = refOf(row);
      return sbomPackage(row, {
        inventory: inventories.get(row.sha256) ?? null,
        decision: decisions.get(decisionKey(row)) ?? null,
        dependsOn: dependsOn(neededNames(row), ref, providers),
        withFindings: true,
        ref,
      });
    });
  }

  /**
   * What each of these names resolves to among the distribution's published packages: for one
   * package, any provide (files included, as its dependencies are resolved at upload); for an
   * export page, package and virtual names only.
   */
  private async providers(codename: string, names: readonly string[], scope: 'package' | 'export'): Promise<ProviderMap> {
    const map: ProviderMap = new Map();
    const add = (name: string, row: Pick<SbomRow, 'format' | 'name' | 'version' | 'arch'>) => {
      const list = map.get(name) ?? [];
      const ref = refOf({ ...row, distribution: codename });
      // The package of that very name first: `Depends: foo` means foo itself when it exists.
      if (row.name === name) list.unshift(ref);
      else list.push(ref);
      map.set(name, list);
    };
    if (names.length === 0) return map;
    if (scope === 'package') {
      const dist = this.distribution(codename);
      for (const r of await providesLookup(this.db, codename)([...names])) add(r.name, { format: dist.format, name: r.package, version: r.packageVersion, arch: r.arch });
      return map;
    }
    for (let i = 0; i < names.length; i += NAMES_PER_QUERY) {
      for (const r of await findIndexedProvidersOf(this.db, codename, names.slice(i, i + NAMES_PER_QUERY))) add(r.provided, r);
    }
    return map;
  }

  /**
   * The distribution's published packages, complete, in keyset pages by id: one query for the
   * page (rows joined with their cached inventory and decision), one for the providers of the
   * names its packages depend on. Dependency edges are resolved per page rather than from a map of
   * every name the distribution provides, which held 50,000 rows at once. `shown` (preview): edges
   * may only point at those packages.
   */
  private async *packages(codename: string, limit: number | null, shown: ReadonlySet<string> | null): AsyncGenerator<SbomPackage[]> {
    const cursor = { after: '', left: limit ?? Number.POSITIVE_INFINITY };
    while (cursor.left > 0) {
      const batch = await this.page(codename, cursor, shown);
      if (batch === null) return;
      yield batch;
    }
  }

  /** The next page after `cursor` (which it moves on), complete; null past the last. */
  private async page(codename: string, cursor: { after: string; left: number }, shown: ReadonlySet<string> | null): Promise<SbomPackage[] | null> {
    const rows = await findIndexedSbomPage(this.db, codename, cursor.after, Math.min(PAGE, cursor.left), SCANNER_VERSION);
    if (rows.length === 0) return null;
    // A short page is the last one.
    cursor.left = rows.length < PAGE ? 0 : cursor.left - rows.length;
    cursor.after = rows[rows.length - 1]!.id;
    const needs = rows.map((row) => neededNames(row));
    const providers = await this.providers(codename, [...new Set(needs.flat(2))], 'export');
    if (shown) for (const [name, refs] of providers) providers.set(name, refs.filter((r) => shown.has(r)));
    const inventories = await this.inventories.forPage(rows, (row) => row.inventory);
    return rows.map((row, i) => {
      const ref = refOf(row);
      return sbomPackage(row, { inventory: inventories[i]!, decision: pageDecision(row), dependsOn: dependsOn(needs[i]!, ref, providers), withFindings: true, ref });
    });
  }

  /** Keyset pages of the distribution's published packages, by id. */
  private async *rows(codename: string, limit: number | null): AsyncGenerator<SbomRow[]> {
    let after = '';
    let left = limit ?? Number.POSITIVE_INFINITY;
    while (left > 0) {
      const batch = await findIndexedSbomRowsAfter(this.db, codename, after, Math.min(BATCH, left));
      if (batch.length === 0) return;
      yield batch;
      left -= batch.length;
      after = batch[batch.length - 1]!.id;
    }
  }

  /** Every package the distribution publishes (GET /sbom/export), or the first `limit` (preview). */
  async distributionDocument(format: SbomFormat, codename: string, limit: number | null = null): Promise<SbomDocument> {
    const dist = this.distribution(codename);
    let shown: Set<string> | null = null;
    if (limit !== null) {
      // A preview lists some packages: edges may only point at those, or they would dangle.
      shown = new Set<string>();
      for await (const rows of this.rows(codename, limit)) for (const row of rows) shown.add(refOf(row));
    }
    const meta = this.meta({ kind: 'distribution', name: dist.codename, version: dist.scannerDistro.split(':').pop() ?? '', distribution: dist.codename, description: dist.description });
    const plan = this.plan(format, meta, null);
    const suffix = limit === null ? 'sbom' : 'sbom-preview';
    const body = documentText(plan, () => this.packages(codename, limit, shown), deflatedSpool);
    return { filename: `${safeName(codename)}-${suffix}.${EXTENSION[format]}`, body };
  }

  /** One package version (GET /sbom/{name}/{version}): the package, what it embeds, and the packages it depends on. */
  async packageDocument(format: SbomFormat, name: string, version: string, filter: { arch?: string; distribution?: string }): Promise<SbomDocument> {
    const rows = await findSbomRowsOfVersion(this.db, name, version, filter);
    const where = [filter.arch, filter.distribution].filter(Boolean).join(', ');
    if (rows.length === 0) throw new DomainError('not_found', 'package_not_found', `Package ${name} ${version}${where ? ` (${where})` : ''} not found`);
    // A published copy describes what clients install; otherwise the oldest row.
    const row = rows.find((r) => isIndexed(r.status)) ?? rows[0]!;
    const needed = [...new Set(neededNames(row).flat())];
    const providers = await this.providers(row.distribution, needed, 'package');
    const [root] = await this.complete([row], providers);
    const depRows = await this.depRows(row.distribution, root!.dependsOn);
    const deps = depRows.map((r) => sbomPackage(r, { inventory: null, decision: null, dependsOn: [], withFindings: false }));
    const dist = this.distribution(row.distribution);
    const meta = this.meta({ kind: 'package', name: row.name, version: row.version, distribution: row.distribution, description: dist.description });
    const plan = this.plan(format, meta, root!);
    const filename = `${safeName(`${row.name}_${row.version}_${row.arch}`)}.${EXTENSION[format]}`;
    return { filename, body: documentText(plan, async function* () { yield deps; }) };
  }

  private async depRows(codename: string, refs: readonly string[]): Promise<SbomRow[]> {
    if (refs.length === 0) return [];
    const wanted = new Set(refs);
    const names = [...new Set(refs.map((r) => decodeURIComponent(/^pkg:[^/]+\/[^/]+\/([^@]+)@/.exec(r)?.[1] ?? '')))].filter(Boolean);
    const rows = await findIndexedSbomRowsByName(this.db, codename, names);
    const seen = new Set<string>();
    return rows.filter((r) => {
      const ref = refOf(r);
      if (!wanted.has(ref) || seen.has(ref)) return false;
      seen.add(ref);
      return true;
    });
  }

  /** The distribution's open findings as SARIF 2.1.0 (every package it holds except rejected ones). */
  async sarif(codename: string, minSeverity: Severity | null): Promise<{ filename: string; log: Record<string, unknown> }> {
    this.distribution(codename);
    const floor = minSeverity ? severityRank(minSeverity) : 0;
    const ids = await findIdsOfPackagesWithFindings(this.db, codename, floor);
    const packages: SarifPackage[] = [];
    for (let i = 0; i < ids.length; i += BATCH) {
      const rows = await findSbomRowsByIds(this.db, ids.slice(i, i + BATCH));
      const decisions = await decisionsFor(this.db, rows);
      for (const row of rows) {
        const pkg = sbomPackage(row, { inventory: null, decision: decisions.get(decisionKey(row)) ?? null, dependsOn: [], withFindings: true });
        const vulnerabilities = pkg.vulnerabilities.filter((v) => severityRank(v.severity as Severity) >= floor);
        if (vulnerabilities.length) packages.push({ ...pkg, vulnerabilities, poolPath: row.pool_path });
      }
    }
    return { filename: `${safeName(codename)}.sarif`, log: sarifLog(packages, this.options.toolVersion, this.options.appUrl) };
  }
}
