/**
 * SBOMs: one package version, a whole distribution (streamed from keyset-paginated
 * batches, one pass per JSON array), a preview, and the distribution's findings as SARIF.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../adapters/db/index.js';
import {
  findIdsOfPackagesWithFindings, findIndexedProviders, findIndexedSbomRowsAfter, findIndexedSbomRowsByName, findSbomRowsByIds, findSbomRowsOfVersion,
  type SbomRow,
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
import { InventoryStore } from './inventory.js';
import { decisionsFor, dependsOn, neededNames, refOf, sbomPackage, type ProviderMap } from './model.js';

export type SbomFormat = 'cyclonedx' | 'spdx';

/** A document ready to send: its download name and its text, produced piece by piece. */
export interface SbomDocument {
  filename: string;
  body: AsyncIterable<string>;
}

/**
 * Rows per keyset page. Each page's rows, parsed inventories and packages live across the next
 * query's await, long enough to be promoted out of V8's nursery; at 500 the dead pages piled up in
 * old space between full collections (a 50,000-package export took the service from 258 to
 * 535 MiB resident), at 100 it adds about 60 MiB, for about a second more (bench/sbom.ts).
 */
const BATCH = 100;
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
        decision: decisions.get(`${row.name} ${row.version} ${row.arch}`) ?? null,
        dependsOn: dependsOn(row, ref, providers),
        withFindings: true,
      });
    });
  }

  /** What each name resolves to among the distribution's published packages. */
  private async providers(codename: string, names?: readonly string[]): Promise<ProviderMap> {
    const map: ProviderMap = new Map();
    const add = (name: string, row: Pick<SbomRow, 'format' | 'name' | 'version' | 'arch'>) => {
      const list = map.get(name) ?? [];
      const ref = refOf({ ...row, distribution: codename });
      // The package of that very name first: `Depends: foo` means foo itself when it exists.
      if (row.name === name) list.unshift(ref);
      else list.push(ref);
      map.set(name, list);
    };
    if (names) {
      if (names.length === 0) return map;
      const dist = this.distribution(codename);
      for (const r of await providesLookup(this.db, codename)([...names])) add(r.name, { format: dist.format, name: r.package, version: r.packageVersion, arch: r.arch });
      return map;
    }
    for (const r of await findIndexedProviders(this.db, codename)) add(r.provided, r);
    return map;
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
    let providers = await this.providers(codename);
    if (limit !== null) {
      // A preview lists some packages: edges may only point at those, or they would dangle.
      const shown = new Set<string>();
      for await (const rows of this.rows(codename, limit)) for (const row of rows) shown.add(refOf(row));
      providers = new Map([...providers].map(([name, refs]) => [name, refs.filter((r) => shown.has(r))]));
    }
    const meta = this.meta({ kind: 'distribution', name: dist.codename, version: dist.scannerDistro.split(':').pop() ?? '', distribution: dist.codename, description: dist.description });
    const plan = this.plan(format, meta, null);
    const self = this;
    async function* batches() {
      for await (const rows of self.rows(codename, limit)) yield await self.complete(rows, providers);
    }
    const suffix = limit === null ? 'sbom' : 'sbom-preview';
    return { filename: `${safeName(codename)}-${suffix}.${EXTENSION[format]}`, body: documentText(plan, batches) };
  }

  /** One package version (GET /sbom/{name}/{version}): the package, what it embeds, and the packages it depends on. */
  async packageDocument(format: SbomFormat, name: string, version: string, filter: { arch?: string; distribution?: string }): Promise<SbomDocument> {
    const rows = await findSbomRowsOfVersion(this.db, name, version, filter);
    const where = [filter.arch, filter.distribution].filter(Boolean).join(', ');
    if (rows.length === 0) throw new DomainError('not_found', 'package_not_found', `Package ${name} ${version}${where ? ` (${where})` : ''} not found`);
    // A published copy describes what clients install; otherwise the oldest row.
    const row = rows.find((r) => isIndexed(r.status)) ?? rows[0]!;
    const needed = [...new Set(neededNames(row).flat())];
    const providers = await this.providers(row.distribution, needed);
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
        const pkg = sbomPackage(row, { inventory: null, decision: decisions.get(`${row.name} ${row.version} ${row.arch}`) ?? null, dependsOn: [], withFindings: true });
        const vulnerabilities = pkg.vulnerabilities.filter((v) => severityRank(v.severity as Severity) >= floor);
        if (vulnerabilities.length) packages.push({ ...pkg, vulnerabilities, poolPath: row.pool_path });
      }
    }
    return { filename: `${safeName(codename)}.sarif`, log: sarifLog(packages, this.options.toolVersion, this.options.appUrl) };
  }
}
