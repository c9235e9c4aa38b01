/**
 * Importing catalog packages (POST /import/fetch, /import/batch, /import/packages): resolve the
 * closure, download each file, check its size and SHA-256 against the signed catalog, then run
 * the upload pipeline with that SHA-256 as the claimed one (provenance `verified`). Dependencies
 * go first so each package's dependency check sees them: the next package enters the pipeline
 * once the previous one's row is stored, while that one still waits for the signed index, so the
 * closure's publishes coalesce. Each call is an import group; each package is audited as IMPORT.
 * Downloads run a few packages ahead of the pipeline. One import per file at a time across
 * replicas: each file is claimed in the database before its download, so a second import of it,
 * here or on another replica, waits and then finds it stored.
 */
import { randomBytes } from 'node:crypto';
import type { AuditLog } from '../../adapters/audit/audit-log.js';
import type { Db } from '../../adapters/db/index.js';
import { addImportGroupMember, createImportGroup } from '../../adapters/db/import-groups.table.js';
import { fetchToFile, upstreamUrl, type DownloadedFile } from '../../adapters/upstream/fetcher.js';
import { DomainError } from '../../domain/errors.js';
import type { CatalogPackage } from '../../domain/imports/resolve.js';
import { isoUtc } from '../../domain/time.js';
import { findStoredUpload } from '../../adapters/db/packages.table.js';
import type { UploadResult, UploadService } from '../upload.js';
import type { CatalogQuery } from './catalog-query.js';
import type { SourceStore, StoredSource } from './source-store.js';
import { claimKey, RunClaims } from './claims.js';

export interface ImportRequest {
  name: string;
  version?: string;
  arch?: string;
  distribution?: string;
}

export interface ImportOptions {
  withDependencies: boolean;
  group?: string;
  user: string | null;
  ip: string | null;
}

export interface ImportedPackage {
  name: string;
  version: string;
  arch: string;
  distribution: string;
  source_id: string;
  required_by: string | null;
  relation: string | null;
  /** Pipeline outcome, `already_present` when the same file was stored before, or `failed`. */
  status: string;
  provenance: string | null;
  detail: string | null;
  code: string | null;
  result: UploadResult | null;
}

/** One package's outcome; whether the pipeline already audited it; `packageId`: the row holding its file, when known without another read. */
type Attempt = ImportedPackage & { audited: boolean; packageId: string | null };

export interface ImportSummary {
  published: number;
  pending_review: number;
  quarantined: number;
  rejected: number;
  failed: number;
  already_present: number;
}

export interface ImportReport {
  group: string;
  packages: ImportedPackage[];
  unsatisfiable: Array<{ required_by: string; relation: string; reason: string }>;
  summary: ImportSummary;
}

export type ImportEvent =
  | { event: 'resolved'; total: number; packages: Array<{ name: string; version: string; arch: string }> }
  | { event: 'package'; index: number; total: number; package: ImportedPackage };

export interface ImporterDeps {
  db: Db;
  audit: AuditLog;
  catalog: CatalogQuery;
  sources: SourceStore;
  uploads: UploadService;
  tempDir: string;
  maxPackageBytes: number;
}

const GROUP = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** How many downloads run ahead of the package the pipeline is on. */
const DOWNLOAD_AHEAD = 4;
/** How many packages may be in the pipeline at once (all but the newest stored, waiting for the signed index). */
const PIPELINES_AT_ONCE = 8;

type PlannedPackage = { pkg: CatalogPackage; distribution: string; requiredBy: string | null; relation: string | null; depth: number };

/** What the packages of one run share. */
interface RunContext {
  group: string;
  options: ImportOptions;
  claims: RunClaims;
  downloads: Map<number, Promise<Download>>;
  sourceOf: (id: string) => Promise<StoredSource>;
}

/** A package's file as the pipeline gets it: downloaded, already stored, why not, or left to the run holding its claim. */
type Download = { kind: 'file'; file: DownloadedFile } | { kind: 'stored'; status: string } | { kind: 'failed'; error: DomainError } | { kind: 'busy' };

export class Importer {
  constructor(private readonly deps: ImporterDeps) {}

  async run(requests: ImportRequest[], options: ImportOptions, onEvent: (event: ImportEvent) => void = () => undefined): Promise<ImportReport> {
    if (options.group !== undefined && !GROUP.test(options.group)) {
      throw new DomainError('invalid', 'invalid_group', 'group: letters, digits, ".", "_" or "-", at most 100');
    }
    const plan = new Map<string, PlannedPackage>();
    const unsatisfiable: ImportReport['unsatisfiable'] = [];
    for (const request of requests) {
      const { distribution, root, closure } = await this.deps.catalog.resolve(request.name, request);
      const selected = options.withDependencies ? closure.selected : closure.selected.filter((s) => s.pkg === root);
      for (const s of selected) {
        const key = `${distribution}\0${s.pkg.name}\0${s.pkg.version}\0${s.pkg.arch}`;
        const known = plan.get(key);
        if (!known || known.depth < s.depth) plan.set(key, { pkg: s.pkg, distribution, requiredBy: s.requiredBy, relation: s.relation, depth: Math.max(s.depth, known?.depth ?? 0) });
      }
      if (options.withDependencies) unsatisfiable.push(...closure.unsatisfiable.map((u) => ({ required_by: u.requiredBy, relation: u.relation, reason: u.reason })));
    }
    // Deepest first: a package's dependencies are stored before the package itself.
    const ordered = [...plan.values()].sort((a, b) => b.depth - a.depth);
    const group = options.group ?? `import-${isoUtc().replace(/[-:T.Z+]/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
    const distributions = [...new Set(ordered.map((p) => p.distribution))];
    await createImportGroup(this.deps.db, { name: group, distribution: distributions.join(','), created_by: options.user, created_at: isoUtc() });
    onEvent({ event: 'resolved', total: ordered.length, packages: ordered.map((p) => ({ name: p.pkg.name, version: p.pkg.version, arch: p.pkg.arch })) });
    const packages: ImportedPackage[] = [];
    const claims = new RunClaims(this.deps.db);
    // Where each source's files are, read once per run rather than once per package.
    const sources = new Map<string, Promise<StoredSource>>();
    const sourceOf = (id: string): Promise<StoredSource> => {
      let source = sources.get(id);
      if (!source) {
        source = this.deps.sources.get(id);
        sources.set(id, source);
        source.catch(() => sources.delete(id));
      }
      return source;
    };
    // Downloads run ahead of the pipeline (a few files at a time), so the pipeline, which takes
    // the packages in dependency order, never waits for the network but for the first.
    // A file another run has claimed is not downloaded ahead: its turn waits for the claim.
    const downloads = new Map<number, Promise<Download>>();
    const fetchAhead = (from: number) => {
      for (let i = from; i < Math.min(ordered.length, from + DOWNLOAD_AHEAD); i++) {
        if (downloads.has(i)) continue;
        const { pkg, distribution } = ordered[i]!;
        const pending = claims.tryTake(claimKey(distribution, pkg.sha256)).then((mine): Promise<Download> => (mine ? this.download(pkg, distribution, sourceOf) : Promise.resolve({ kind: 'busy' })));
        // Awaited in its turn; until then a failure must not count as unhandled.
        pending.catch(() => undefined);
        downloads.set(i, pending);
      }
    };
    // One package at a time enters the pipeline, in dependency order, but the next one enters as
    // soon as this one's row is stored (its dependency check then sees it), not once the signed
    // index lists it: the waits for the index overlap, and their publishes coalesce.
    const running: Array<Promise<ImportedPackage>> = [];
    const reportInOrder = async (keep: number) => {
      while (running.length > keep) {
        const reported = await running.shift()!;
        packages.push(reported);
        onEvent({ event: 'package', index: packages.length, total: ordered.length, package: reported });
      }
    };
    try {
      for (const [index, item] of ordered.entries()) {
        fetchAhead(index);
        let admitted!: () => void;
        const stored = new Promise<void>((resolve) => { admitted = resolve; });
        const done = this.importInTurn(item, index, { group, options, claims, downloads, sourceOf }, admitted);
        // Awaited in order below; a failure meanwhile must not count as unhandled.
        done.catch(() => undefined);
        running.push(done);
        await Promise.race([stored, done]);
        await reportInOrder(PIPELINES_AT_ONCE - 1);
      }
      await reportInOrder(0);
    } finally {
      // An import that stops early leaves no downloaded file and no claim behind.
      await Promise.allSettled(running);
      for (const pending of downloads.values()) await pending.then((d) => (d.kind === 'file' ? d.file.remove() : undefined), () => undefined);
      await claims.releaseAll();
    }
    return { group, packages, unsatisfiable, summary: summarise(packages) };
  }

  /** One package of the plan, its claim taken (waiting for another run's), imported, remembered in the group and audited. */
  private async importInTurn(item: PlannedPackage, index: number, run: RunContext, admitted: () => void): Promise<ImportedPackage> {
    const { claims, downloads, group, options } = run;
    const key = claimKey(item.distribution, item.pkg.sha256);
    let downloaded = downloads.get(index)!;
    if (!claims.holds(key)) {
      const ahead = downloaded;
      try {
        await claims.take(key);
        if ((await ahead).kind === 'busy') downloaded = this.download(item.pkg, item.distribution, run.sourceOf);
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        const early = await ahead.catch(() => null);
        if (early?.kind === 'file') await early.file.remove();
        downloaded = Promise.resolve({ kind: 'failed', error });
      }
    }
    downloads.delete(index);
    const provenance = `group=${group}; source=${item.pkg.sourceId}; signed_sha256=${item.pkg.sha256}`;
    const { audited, packageId, ...result } = await this.importOne(item.pkg, item.distribution, options, provenance, downloaded, admitted).finally(() => claims.release(key));
    const reported = { ...result, required_by: item.requiredBy, relation: item.relation };
    await this.remember(group, reported, item.pkg, packageId);
    // The pipeline wrote the IMPORT entry of what it judged; what never reached it is recorded here.
    if (!audited) {
      await this.deps.audit.record({
        action: 'IMPORT', user: options.user, ip: options.ip, package: reported.name, version: reported.version,
        result: reported.status === 'already_present' ? 'SUCCESS' : 'FAILURE',
        detail: `distribution=${item.distribution}; status=${reported.status}; ${provenance}${reported.detail ? `; ${reported.detail}` : ''}`,
      });
    }
    return reported;
  }

  /**
   * Downloads a catalog package into a temp file and checks its size against the signed catalog
   * (the pipeline checks its SHA-256); nothing is downloaded for a file already stored.
   */
  private async download(pkg: CatalogPackage, distribution: string, sourceOf: (id: string) => Promise<StoredSource>): Promise<Download> {
    try {
      const stored = await findStoredUpload(this.deps.db, distribution, pkg.name, pkg.version, pkg.arch);
      if (stored && stored.upload_sha256 === pkg.sha256) return { kind: 'stored', status: stored.status };
      if (pkg.size > this.deps.maxPackageBytes) throw new DomainError('too_large', 'file_too_large', `${pkg.name} is ${pkg.size} bytes, more than MAX_UPLOAD_MB allows`);
      const source = await sourceOf(pkg.sourceId);
      const url = upstreamUrl((source.type === 'apt' ? source.url : source.baseurl)!, pkg.location);
      const file = await fetchToFile(url, { maxBytes: pkg.size, timeoutMs: 15 * 60_000 }, this.deps.tempDir);
      if (!file) throw new DomainError('not_found', 'upstream_missing', `${pkg.location} is listed in the signed index but the upstream does not have it`);
      // The pipeline's provenance step compares the bytes with the signed index's SHA-256; the
      // size is checked here, as the download cap already bounds it from above.
      if (file.size !== pkg.size) {
        await file.remove();
        throw new DomainError('invalid', 'checksum_mismatch', `${pkg.location} is ${file.size} bytes, the signed index says ${pkg.size}`);
      }
      return { kind: 'file', file };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { kind: 'failed', error };
    }
  }

  private async importOne(pkg: CatalogPackage, distribution: string, options: ImportOptions, provenance: string, downloaded: Promise<Download>, admitted: () => void): Promise<Attempt> {
    const base: Attempt = {
      audited: false, packageId: null,
      name: pkg.name, version: pkg.version, arch: pkg.arch, distribution, source_id: pkg.sourceId, required_by: null, relation: null,
      status: 'failed', provenance: null, detail: null, code: null, result: null,
    };
    const download = await downloaded;
    // Not downloaded because stored (before the claim, or by the run that held it): answered as
    // present. A file this run downloaded under its claim goes to the pipeline, which answers a
    // copy stored meanwhile by a plain upload as already present itself.
    if (download.kind !== 'file') {
      const stored = await findStoredUpload(this.deps.db, distribution, pkg.name, pkg.version, pkg.arch);
      if (stored && stored.upload_sha256 === pkg.sha256) {
        return { ...base, packageId: stored.id, status: 'already_present', detail: `already stored as ${stored.status}` };
      }
    }
    if (download.kind === 'stored' || download.kind === 'busy') return { ...base, status: 'failed', detail: `${pkg.name} ${pkg.version} was deleted while being imported`, code: 'deleted_meanwhile' };
    if (download.kind === 'failed') return { ...base, status: 'failed', detail: download.error.message, code: download.error.code };
    try {
      const answer = await this.deps.uploads.upload({ distribution, file: download.file, claimedSha256: pkg.sha256, user: options.user, ip: options.ip, audit: { action: 'IMPORT', detail: provenance }, onAdmitted: admitted });
      const body = answer.body;
      // The row the upload stored, when it is the catalog's name/version/arch; anything else (a
      // duplicate, a package whose control fields differ from the index) is looked up in remember().
      const same = answer.httpStatus !== 200 && body.name === pkg.name && body.version === pkg.version && body.arch === pkg.arch;
      return {
        ...base, audited: answer.httpStatus !== 200, packageId: same ? answer.packageId : null,
        status: answer.httpStatus === 200 ? 'already_present' : body.status, provenance: body.pipeline.provenance ?? null,
        detail: body.detail ?? (body.reasons.length ? body.reasons.join(' | ') : null), code: body.code ?? null, result: body,
      };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { ...base, status: 'failed', detail: error.message, code: error.code };
    }
  }

  /** Records the package in the group when the distribution holds its file (the row this import stored or found, else looked up). */
  private async remember(group: string, item: ImportedPackage, pkg: CatalogPackage, packageId: string | null): Promise<void> {
    let id = packageId;
    if (!id) {
      const row = await findStoredUpload(this.deps.db, item.distribution, item.name, item.version, item.arch);
      if (!row || row.upload_sha256 !== pkg.sha256) return;
      id = row.id;
    }
    await addImportGroupMember(this.deps.db, {
      group_name: group, package_id: id, source_id: pkg.sourceId, name: item.name, version: item.version, arch: item.arch, status: item.status, created_at: isoUtc(),
    });
  }
}

function summarise(packages: ImportedPackage[]): ImportSummary {
  const count = (status: string) => packages.filter((p) => p.status === status).length;
  return {
    published: count('published'), pending_review: count('pending_review'), quarantined: count('quarantined'),
    rejected: count('rejected'), failed: count('failed'), already_present: count('already_present'),
  };
}
