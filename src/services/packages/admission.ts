/**
 * Admission: an upload that passed validation becomes a stored package. One place decides where
 * its file goes (the store, the published pool, or quarantine) and writes its row, what it
 * provides and its findings in one transaction, whatever status it is admitted with.
 */
import { randomUUID } from 'node:crypto';
import { findPackage, findPoolConflict, insertPackage, type PackageRow } from '../../adapters/db/packages.table.js';
import { isIndexed } from '../../domain/distributions.js';
import { DomainError } from '../../domain/errors.js';
import type { UploadState } from '../../domain/pipeline/types.js';
import { isoUtc } from '../../domain/time.js';
import { handlerFor } from '../formats/index.js';
import type { PipelineDeps } from '../pipeline/deps.js';

export type AdmittedStatus = 'published' | 'pending_review' | 'quarantined';

export type Admission = { kind: 'stored'; id: string; indexed: boolean } | { kind: 'duplicate'; id: string };

/** The row an upload is stored as. */
function packageRow(state: UploadState, status: AdmittedStatus, uploadedBy: string | null): PackageRow {
  const pkg = state.pkg!;
  const handler = handlerFor(pkg.format);
  const poolPath = handler.poolPath(pkg, state.distribution);
  const now = isoUtc();
  return {
    id: randomUUID(),
    distribution: state.distribution.codename,
    format: pkg.format,
    name: pkg.name,
    version: pkg.version,
    arch: pkg.arch,
    status,
    cve_status: state.cveStatus,
    ...state.file,
    filename: pkg.repositoryFilename,
    pool_path: poolPath,
    source_name: pkg.sourceName,
    source_version: pkg.sourceVersion,
    metadata: JSON.stringify(pkg.metadata),
    index_entry: handler.indexEntry(pkg, state.file, poolPath, Math.floor(Date.now() / 1000)),
    relations: JSON.stringify(pkg.relations),
    files: JSON.stringify(pkg.files),
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
 * Stores the upload's file and row. An indexed status links the file at its pool path first (so
 * the row never names a file the pool lacks); a quarantined one moves it to quarantine. A
 * concurrent upload of the same name/version/arch that committed first makes this a duplicate
 * (same bytes) or a 409 (other bytes).
 */
export async function admitPackage(deps: Pick<PipelineDeps, 'db' | 'files'>, state: UploadState, status: AdmittedStatus, uploadedBy: string | null): Promise<Admission> {
  const pkg = state.pkg!;
  const row = packageRow(state, status, uploadedBy);
  const indexed = isIndexed(status);
  if (indexed) {
    const other = await findPoolConflict(deps.db, row.pool_path, row.sha256);
    if (other) {
      throw new DomainError('conflict', 'pool_conflict', `${row.pool_path} already holds different content (published in ${other.distribution})`, {
        existing_sha256: other.sha256,
        incoming_sha256: row.sha256,
      });
    }
  }
  if (status === 'quarantined') {
    await deps.files.quarantineTemp(state.path, row.sha256);
  } else {
    await deps.files.keep(state.path, row.sha256);
    if (indexed) await deps.files.publish(row.sha256, row.pool_path);
  }
  try {
    await deps.db.transaction().execute((trx) => insertPackage(trx, row, handlerFor(pkg.format).provides(pkg), state.findingDetails));
  } catch (error) {
    const existing = await findPackage(deps.db, row.distribution, row.name, row.version, row.arch);
    if (!existing) throw error;
    if (existing.sha256 === row.sha256) return { kind: 'duplicate', id: existing.id };
    throw new DomainError('conflict', 'version_exists', `${row.name} ${row.version} (${row.arch}) already exists in ${row.distribution} with different content`, {
      existing_sha256: existing.sha256,
      incoming_sha256: row.sha256,
    });
  }
  return { kind: 'stored', id: row.id, indexed };
}
