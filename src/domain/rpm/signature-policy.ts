/**
 * What happens to an RPM's own signature when it is admitted to a distribution. Tollgate signs
 * what it publishes, so clients can install with `gpgcheck=1`; the policy decides what a
 * signature the package already carries (a build system's, a distribution's) is worth.
 *
 * - `replace` (default): every package is published with the repository's signature only.
 * - `keep`: a package that arrives signed is published as it came (its signer's key must then be
 *   imported by clients); an unsigned one is signed by the repository.
 * - `refuse_unsigned`: a package that arrives unsigned is rejected; a signed one gets the
 *   repository's signature instead, as with `replace`.
 *
 * Independently, a distribution with trusted upstream keys rejects any upload whose own
 * signature does not verify with one of them.
 */
export const RPM_SIGNATURE_POLICIES = ['replace', 'keep', 'refuse_unsigned'] as const;
export type RpmSignaturePolicy = (typeof RPM_SIGNATURE_POLICIES)[number];

/** `signed_by` of a package published with the foreign signature it arrived with. */
export const UPSTREAM_SIGNER = 'upstream';

export type AdmissionSigning = { action: 'sign' | 'keep' } | { action: 'refuse'; code: 'rpm_signature_missing'; message: string };

export function admissionSigning(policy: RpmSignaturePolicy, arrivedSigned: boolean): AdmissionSigning {
  if (!arrivedSigned && policy === 'refuse_unsigned') {
    return { action: 'refuse', code: 'rpm_signature_missing', message: 'the package is not signed, and this repository refuses unsigned RPMs (rpm_signature_policy refuse_unsigned)' };
  }
  return { action: arrivedSigned && policy === 'keep' ? 'keep' : 'sign' };
}
