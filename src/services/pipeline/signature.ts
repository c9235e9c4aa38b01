import type { PipelineStep, UploadState } from '../../domain/pipeline/types.js';
import { UPSTREAM_SIGNER } from '../../domain/rpm/signature-policy.js';
import { admitPackage } from '../packages/admission.js';
import type { PipelineDeps } from './deps.js';

/** What the served file's signature is, for the step message. */
function signedFile(state: UploadState): string {
  const signer = state.served?.signed_by;
  if (!signer) return '';
  return signer === UPSTREAM_SIGNER ? 'package keeps its own signature; ' : `package signed with key ${signer.slice(-16)}; `;
}

/**
 * Step 5: the package is admitted (an RPM signed with the repository key, stored with its row,
 * in the pool when its status is indexed) and, when indexed, the distribution's signed index is regenerated. An answer of `published` is
 * given only once the signed index lists it.
 */
export function signatureStep(deps: PipelineDeps): PipelineStep {
  return {
    name: 'signature',
    async run(state) {
      const status = state.outcome === 'pending_review' ? 'pending_review' : 'published';
      const admission = await admitPackage(deps, state, status, deps.uploadedBy);
      if (admission.kind === 'duplicate') {
        state.duplicateOf = admission.id;
        deps.onAdmitted?.();
        return { name: 'signature', status: 'passed', message: 'identical file stored by a concurrent upload', value: 'duplicate' };
      }
      state.storedPackageId = admission.id;
      state.outcome = status;
      deps.onAdmitted?.();
      if (!admission.indexed) {
        return { name: 'signature', status: 'skipped', message: `${signedFile(state)}${status}: stored, not in the index`, value: 'not_published' };
      }
      await deps.publisher.request(state.distribution.codename);
      return { name: 'signature', status: 'passed', message: `${signedFile(state)}index of ${state.distribution.codename} regenerated and signed`, value: 'signed' };
    },
  };
}
