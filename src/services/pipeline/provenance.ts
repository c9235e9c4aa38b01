import { DomainError } from '../../domain/errors.js';
import { rejectUpload, type PipelineStep } from '../../domain/pipeline/types.js';
import { findPackage } from '../../adapters/db/packages.table.js';
import type { PipelineDeps } from './deps.js';

/**
 * Step 2: the SHA-256 the client claims (form field `sha256`) matches the bytes received; and the
 * same name/version/arch is not already stored in the distribution with other content (409), or
 * is stored with exactly these bytes (an idempotent retry, answered with the stored result).
 * An RPM's own signature is checked against its distribution's rules (trusted upstream keys,
 * rpm_signature_policy): a missing or untrusted one rejects the upload here, before any scan.
 */
export function provenanceStep(deps: Pick<PipelineDeps, 'db' | 'rpmSigning'>): PipelineStep {
  return {
    name: 'provenance',
    async run(state) {
      const pkg = state.pkg!;
      if (state.claimedSha256 && state.claimedSha256 !== state.file.sha256) {
        const message = `SHA-256 mismatch: expected ${state.claimedSha256}, received ${state.file.sha256}`;
        rejectUpload(state, 'checksum_mismatch', message);
        return { name: 'provenance', status: 'failed', message, value: 'mismatch' };
      }
      const existing = await findPackage(deps.db, state.distribution.codename, pkg.name, pkg.version, pkg.arch);
      if (existing && existing.upload_sha256 === state.file.sha256) {
        state.duplicateOf = existing.id;
        return { name: 'provenance', status: 'passed', message: 'identical file already stored', value: 'duplicate' };
      }
      if (existing) {
        throw new DomainError('conflict', 'version_exists', `${pkg.name} ${pkg.version} (${pkg.arch}) already exists in ${state.distribution.codename} with different content`, {
          existing_sha256: existing.upload_sha256,
          incoming_sha256: state.file.sha256,
          name: pkg.name,
          package: pkg.name,
          version: pkg.version,
          arch: pkg.arch,
          distribution: state.distribution.codename,
        });
      }
      const digest = state.claimedSha256 ? `SHA-256 verified: ${state.file.sha256}` : `SHA-256 recorded: ${state.file.sha256} (no checksum was supplied to verify)`;
      const value = state.claimedSha256 ? 'verified' : 'recorded';
      if (pkg.format !== 'rpm') return { name: 'provenance', status: 'passed', message: digest, value };
      const signature = await deps.rpmSigning.check(state.path, state.distribution.codename);
      if (signature.action === 'refuse') {
        rejectUpload(state, signature.code, signature.message);
        return { name: 'provenance', status: 'failed', message: signature.message, value: 'signature_refused' };
      }
      state.rpmSignature = signature.action;
      return { name: 'provenance', status: 'passed', message: `${digest}; ${signature.message}`, value };
    },
  };
}
