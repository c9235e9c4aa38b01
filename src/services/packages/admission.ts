/**
 * Admission: an upload that passed validation becomes a stored package. One place decides where
 * its file goes (the store, the published pool, or quarantine), signs an RPM with the repository
 * key, and writes its row, what it provides and its findings in one transaction, whatever status
 * it is admitted with.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../adapters/db/index.js';
import { countReferences, findPackage, insertPackage, type PackageRow } from '../../adapters/db/packages.table.js';
import type { PackageFiles } from '../../adapters/storage/interfaces.js';
import { isIndexed } from '../../domain/distributions.js';
import { DomainError } from '../../domain/errors.js';
import type { FileFacts, InspectedPackage } from '../../domain/package.js';
import type { UploadState } from '../../domain/pipeline/types.js';
import { UPSTREAM_SIGNER } from '../../domain/rpm/signature-policy.js';
import { isoUtc } from '../../domain/time.js';
import { handlerFor } from '../formats/index.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import { publishSourceFiles, releaseSourceFiles, sourceFileConflict, sourceFilesOf, type SourceFileRef } from './source-files.js';
import { poolLockPath, refuseOccupiedPoolPath, withPoolPathLock } from './pool-path-lock.js';

export type AdmittedStatus = 'published' | 'pending_review' | 'quarantined';

export type Admission = { kind: 'stored'; id: string; indexed: boolean } | { kind: 'duplicate'; id: string };

/** The file a package is stored and served as: the upload itself, or its signed copy. */
interface ServedFile {
  path: string;
  facts: FileFacts;
  pkg: InspectedPackage;
  signedBy: string | null;
}

/** The row an upload is stored as. */
function packageRow(state: UploadState, served: ServedFile, status: AdmittedStatus, uploadedBy: string | null): PackageRow {
  const pkg = served.pkg;
  const handler = handlerFor(pkg.format);
  const poolPath = handler.poolPath(pkg, state.distribution, state.component, served.path === state.path ? null : served.facts.sha256);
  const now = isoUtc();
  return {
    id: randomUUID(),
    distribution: state.distribution.codename,
    format: pkg.format,
    name: pkg.name,
    version: pkg.version,
    arch: pkg.arch,
    component: state.component,
    status,
    cve_status: state.cveStatus,
    ...served.facts,
    upload_sha256: state.file.sha256,
    upload_size: state.file.size,
    signed_by: served.signedBy,
    filename: pkg.repositoryFilename,
    pool_path: poolPath,
    source_name: pkg.sourceName,
    source_version: pkg.sourceVersion,
    metadata: JSON.stringify(pkg.metadata),
    index_entry: handler.indexEntry(pkg, served.facts, poolPath, Math.floor(Date.now() / 1000)),
    relations: JSON.stringify(pkg.relations),
    files: JSON.stringify(pkg.files),
    listed_generation: pkg.filesPending ? null : 0,
    pipeline: '[]',
    findings: JSON.stringify({ counts: state.findings, details: state.findingDetails }),
    reasons: JSON.stringify(state.reasons),
    uploaded_by: uploadedBy,
    // Quarantine is permanent: no review deadline runs for it.
    sla_deadline: status === 'quarantined' ? null : state.slaDeadline,
    seq: 0,
    created_at: now,
    updated_at: now,
  };
}

/**
 * The file to store: an RPM admitted to a distribution is signed with the repository key (or
 * keeps its own signature, as the policy decided); quarantine keeps the upload as it came.
 */
async function servedFile(deps: Pick<PipelineDeps, 'rpmSigning'>, state: UploadState, status: AdmittedStatus): Promise<ServedFile> {
  const pkg = state.pkg!;
  const asUploaded: ServedFile = { path: state.path, facts: state.file, pkg, signedBy: null };
  if (pkg.format !== 'rpm' || status === 'quarantined') return asUploaded;
  if (state.rpmSignature === 'keep') return { ...asUploaded, signedBy: UPSTREAM_SIGNER };
  const signed = await deps.rpmSigning.sign(state.path, pkg.metadata);
  const { path, ...facts } = signed.file;
  return { path, facts, pkg: { ...pkg, metadata: signed.metadata }, signedBy: signed.signedBy };
}

/**
 * Stores the upload's file and row. An indexed status links the file at its pool path first (so
 * the row never names a file the pool lacks), holding the path's lock (pool-path-lock.ts); a
 * quarantined one moves it to quarantine. A concurrent upload of the same name/version/arch
 * that committed first makes this a duplicate (same uploaded bytes) or a 409 (other bytes).
 */
export async function admitPackage(deps: Pick<PipelineDeps, 'db' | 'files' | 'rpmSigning'>, state: UploadState, status: AdmittedStatus, uploadedBy: string | null): Promise<Admission> {
  const served = await servedFile(deps, state, status);
  try {
    return await store(deps, state, served, status, uploadedBy);
  } finally {
    // A signed copy not moved into the store is not kept (the upload itself is the caller's).
    if (served.path !== state.path) await deps.files.discard(served.path);
  }
}

async function store(deps: Pick<PipelineDeps, 'db' | 'files'>, state: UploadState, served: ServedFile, status: AdmittedStatus, uploadedBy: string | null): Promise<Admission> {
  const row = packageRow(state, served, status, uploadedBy);
  const indexed = isIndexed(status);
  // A source package's other files go where its .dsc goes, each stored once by SHA-256.
  const sourceFiles = sourceFilesOf(row);
  const place = (db: Db) => placeAndInsert(deps.files, db, state, served, row, status, sourceFiles);
  // The upload's bytes are on disk before any name a crash must keep points at them (awaited
  // before the lock below: a large file's fsync must not hold it, nor a database connection).
  await state.durable;
  try {
    // An indexed package occupies its pool path: one admission at a time checks it, links there
    // and writes its row (a source package: its folder, which its other files share).
    await (indexed ? withPoolPathLock(deps.db, poolLockPath(row, sourceFiles.length > 0), place) : place(deps.db));
  } catch (error) {
    if (!(error instanceof InsertRefused)) throw error;
    const existing = await findPackage(deps.db, row.distribution, row.name, row.version, row.arch);
    if (!existing) throw error.cause;
    if (existing.upload_sha256 === row.upload_sha256) return { kind: 'duplicate', id: existing.id };
    throw new DomainError('conflict', 'version_exists', `${row.name} ${row.version} (${row.arch}) already exists in ${row.distribution} with different content`, {
      existing_sha256: existing.upload_sha256,
      incoming_sha256: row.upload_sha256,
    });
  }
  if (row.signed_by) state.served = { signed_by: row.signed_by, sha256: row.sha256, size: row.size };
  return { kind: 'stored', id: row.id, indexed };
}

/** The row's insert failed (a concurrent upload of the same name/version/arch, a full disk): `cause` says why. */
class InsertRefused extends Error {
  constructor(cause: unknown) {
    super('package row refused', { cause });
  }
}

/**
 * Puts the file where the status says (the pool for an indexed one, refused if another indexed
 * package holds the path with other bytes), then inserts the row, what it provides and its
 * findings in one transaction (`db` may be one already: the pool path's lock on PostgreSQL).
 */
async function placeAndInsert(files: PackageFiles, db: Db, state: UploadState, served: ServedFile, row: PackageRow, status: AdmittedStatus, sourceFiles: SourceFileRef[]): Promise<void> {
  const indexed = isIndexed(status);
  if (indexed) {
    await refuseOccupiedPoolPath(db, row.pool_path, row.sha256);
    const otherSource = await sourceFileConflict(db, sourceFiles);
    if (otherSource) {
      throw new DomainError('conflict', 'pool_conflict', `${otherSource.path} already holds different content (published by another source package)`, {
        existing_sha256: otherSource.sha256,
        incoming_sha256: sourceFiles.find((f) => f.path === otherSource.path)!.sha256,
      });
    }
  }
  const tempOf = new Map((state.sourceFiles ?? []).map((f) => [f.name, f.path]));
  if (status === 'quarantined') {
    await files.quarantineTemp(served.path, row.sha256);
    for (const f of sourceFiles) await files.quarantineTemp(tempOf.get(f.name)!, f.sha256);
  } else {
    // A binary package's pool link is made while the store's folder is synced (no row names either
    // before the insert below); a source package's files are all stored before any is published.
    const linkAlongside = indexed && sourceFiles.length === 0;
    await files.keep(served.path, row.sha256, linkAlongside ? () => files.publish(row.sha256, row.pool_path) : undefined);
    for (const f of sourceFiles) await files.keep(tempOf.get(f.name)!, f.sha256);
    if (indexed && !linkAlongside) {
      await files.publish(row.sha256, row.pool_path);
      await publishSourceFiles(files, sourceFiles);
    }
  }
  const insert = (trx: Db) => insertPackage(trx, row, handlerFor(served.pkg.format).provides(served.pkg), state.findingDetails);
  try {
    await (db.isTransaction ? withinSavepoint(db, insert) : db.transaction().execute(insert));
  } catch (error) {
    // Still under the pool path's lock: what this upload put there goes before another can use it.
    if (served.path !== state.path) {
      // The signed copy is this upload's alone: nothing else names its path or its bytes.
      if (indexed) await files.unpublish(row.pool_path);
      await files.forget(row.sha256);
    } else {
      await dropUnreferenced({ db, files }, row, indexed);
      if (status !== 'quarantined') await releaseSourceFiles(db, files, sourceFiles, { unpublish: indexed, forget: true }).catch(() => undefined);
    }
    throw new InsertRefused(error);
  }
}

/** Runs `write` in a savepoint of the transaction `trx`: a failure undoes it alone, and `trx` can go on. */
async function withinSavepoint(trx: Db, write: (trx: Db) => Promise<unknown>): Promise<void> {
  await sql`savepoint admission`.execute(trx);
  try {
    await write(trx);
  } catch (error) {
    await sql`rollback to savepoint admission`.execute(trx);
    throw error;
  }
  await sql`release savepoint admission`.execute(trx);
}

/**
 * After a failed insert (a full disk, a database gone): the stored file and pool link no row
 * names go too, so the store holds no file without its row. Files another row names (the same
 * bytes in another distribution, a concurrent identical upload that committed) stay.
 */
async function dropUnreferenced(deps: Pick<PipelineDeps, 'db' | 'files'>, row: PackageRow, indexed: boolean): Promise<void> {
  try {
    if (indexed && (await countReferences(deps.db, 'pool_path', row.pool_path)) === 0) await deps.files.unpublish(row.pool_path);
    if ((await countReferences(deps.db, 'sha256', row.sha256)) === 0) await deps.files.forget(row.sha256);
  } catch {
    // The database cannot say (it is gone too): the file stays, named by its digest and served by no index.
  }
}
