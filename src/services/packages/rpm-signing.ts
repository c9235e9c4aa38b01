/**
 * The repository's signature on the RPMs it admits. An upload is checked against its
 * distribution's rules (the policy setting, the trusted upstream keys) before it is scanned, and
 * signed with the active repository key when it is admitted; the signed copy is what the pool
 * serves and repodata lists, while the row keeps the uploaded file's SHA-256 as provenance.
 */
import type { HashedTempFile } from '../../adapters/storage/hash-stream.js';
import { isRpmSigned, signRpmToTemp, verifyRpmSignature } from '../../adapters/signing/rpm-signatures.js';
import type { Signer } from '../../adapters/signing/signer.js';
import { DomainError } from '../../domain/errors.js';
import { withResignedLayout, type RpmPackage } from '../../domain/rpm/package.js';
import { admissionSigning, type RpmSignaturePolicy } from '../../domain/rpm/signature-policy.js';

/** A distribution's signature rules, read from the settings at each upload. */
export interface RpmSignatureRules {
  policy: RpmSignaturePolicy;
  /** Armored keys one of which must have signed every upload; null when none is required. */
  trustedKeys: string | null;
}

export type RpmSignatureCheck =
  | { action: 'sign' | 'keep'; message: string }
  | { action: 'refuse'; code: 'rpm_signature_missing' | 'rpm_signature_invalid'; message: string };

/** A signed copy of an upload in a temp file, and the package as that copy has it. */
export interface SignedPackage {
  file: HashedTempFile;
  metadata: RpmPackage;
  signedBy: string;
}

export interface RpmSigningDeps {
  rules(codename: string): Promise<RpmSignatureRules>;
  signer(): Promise<Signer>;
  /** Where signed copies are written: the temp folder of the pool, so keeping one is a rename. */
  tempDir: string;
}

export class RpmPackageSigning {
  constructor(private readonly deps: RpmSigningDeps) {}

  /** What admission will do with this upload's signature, or why it is refused. */
  async check(path: string, codename: string): Promise<RpmSignatureCheck> {
    const rules = await this.deps.rules(codename);
    let arrivedSigned: boolean;
    let verified = '';
    if (rules.trustedKeys) {
      try {
        await verifyRpmSignature(path, rules.trustedKeys);
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        if (error.code === 'rpm_signature_missing') {
          return { action: 'refuse', code: 'rpm_signature_missing', message: `${codename} requires packages signed by a trusted key, and this one is not signed` };
        }
        return { action: 'refuse', code: 'rpm_signature_invalid', message: `the package's signature does not verify with the keys ${codename} trusts: ${error.message}` };
      }
      arrivedSigned = true;
      verified = 'upstream signature verified with a trusted key; ';
    } else {
      arrivedSigned = await isRpmSigned(path);
    }
    const decision = admissionSigning(rules.policy, arrivedSigned);
    if (decision.action === 'refuse') return decision;
    return decision.action === 'keep'
      ? { action: 'keep', message: `${verified}its own signature is kept (rpm_signature_policy keep)` }
      : { action: 'sign', message: `${verified}it will carry the repository's signature` };
  }

  /** A copy of the package signed with the active repository key. */
  async sign(path: string, pkg: RpmPackage): Promise<SignedPackage> {
    const signer = await this.deps.signer();
    const signed = await signRpmToTemp(path, signer, this.deps.tempDir);
    return {
      file: signed.file,
      metadata: withResignedLayout(pkg, { headerStart: signed.headerStart, headerEnd: signed.headerEnd, fileSize: signed.file.size }),
      signedBy: signer.fingerprint,
    };
  }
}
