import { randomUUID } from 'node:crypto';
import { DomainError } from '../../domain/errors.js';
import { isIndexed } from '../../domain/distributions.js';
import type { PipelineStep, UploadState } from '../../domain/pipeline/types.js';
import { handlerFor } from '../formats/index.js';
import { findPackage, insertPackage, type PackageRow } from '../packages/package-store.js';
import { isoUtc } from '../../domain/time.js';
import type { PipelineDeps } from './deps.js';

/** The row an upload is stored as (published, held, or quarantined). */
export function packageRow(state: UploadState, status: string, uploadedBy: string | null, poolPath: string, indexEntry: string): PackageRow {
  const pkg = state.pkg!;
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
    index_entry: indexEntry,
    relations: JSON.stringify(pkg.relations),
    files: JSON.stringify(pkg.files),
    pipeline: '[]',
    findings: JSON.stringify({ counts: state.findings, details: state.findingDetails }),
    reasons: JSON.stringify(state.reasons),
    uploaded_by: uploadedBy,
    sla_deadline: state.slaDeadline,
    seq: 0,
    created_at: now,
    updated_at: now,
  };
}

/**
 * Step 5: store the package and, when its status allows, publish it: the file goes into the
 * store, then (for an indexed status) into the pool, then the row is committed, then the signed
 * index is regenerated. An answer of `published` is given only once the signed index lists it.
 */
export function signatureStep(deps: PipelineDeps): PipelineStep & { storedId(state: UploadState): string | null } {
  const stored = new WeakMap<UploadState, string>();
  return {
    name: 'signature',
    storedId: (state) => stored.get(state) ?? null,
    async run(state) {
      const pkg = state.pkg!;
      const handler = handlerFor(pkg.format);
      const status = state.outcome ?? 'published';
      const poolPath = handler.poolPath(pkg, state.distribution);
      const indexEntry = handler.indexEntry(pkg, state.file, poolPath, Math.floor(Date.now() / 1000));
      const row = packageRow(state, status, deps.uploadedBy, poolPath, indexEntry);
      const indexed = isIndexed(status);
      if (indexed) {
        // One pool path, one file: another distribution may already publish different bytes there.
        const other = await deps.db.selectFrom('packages').select(['sha256', 'distribution']).where('pool_path', '=', poolPath).where('sha256', '!=', state.file.sha256).executeTakeFirst();
        if (other) {
          throw new DomainError('conflict', 'pool_conflict', `${poolPath} already holds different content (published in ${other.distribution})`, {
            existing_sha256: other.sha256,
            incoming_sha256: state.file.sha256,
          });
        }
      }
      await deps.files.keep(state.path, state.file.sha256);
      if (indexed) await deps.files.publish(state.file.sha256, poolPath);
      try {
        await deps.db.transaction().execute((trx) => insertPackage(trx, row, handler.provides(pkg)));
      } catch (error) {
        // A concurrent upload of the same name/version/arch won the insert.
        const existing = await findPackage(deps.db, row.distribution, row.name, row.version, row.arch);
        if (!existing) throw error;
        if (existing.sha256 === row.sha256) {
          state.duplicateOf = existing.id;
          return { name: 'signature', status: 'passed', message: 'identical file stored by a concurrent upload', value: 'duplicate' };
        }
        throw new DomainError('conflict', 'version_exists', `${row.name} ${row.version} (${row.arch}) already exists in ${row.distribution} with different content`, {
          existing_sha256: existing.sha256,
          incoming_sha256: row.sha256,
        });
      }
      stored.set(state, row.id);
      state.outcome = status as UploadState['outcome'];
      if (!indexed) {
        return { name: 'signature', status: 'skipped', message: `${status}: stored, not in the index`, value: 'not_published' };
      }
      await deps.publisher.request(row.distribution);
      return { name: 'signature', status: 'passed', message: `index of ${row.distribution} regenerated and signed`, value: 'signed' };
    },
  };
}
