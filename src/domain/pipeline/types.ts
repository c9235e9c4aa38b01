import type { Distribution } from '../distributions.js';
import type { FileFacts, InspectedPackage } from '../package.js';
import type { StoredCveStatus, StoredFinding } from '../security/policy.js';

/** The validation steps in their order. */
export const STEP_NAMES = ['format', 'provenance', 'antivirus', 'cve', 'signature', 'dependencies'] as const;
export type StepName = (typeof STEP_NAMES)[number];

export type StepStatus = 'passed' | 'failed' | 'skipped' | 'warning';

/** What a step reports: its status, a human message, and the short value shown in `pipeline`. */
export interface StepResult {
  name: StepName;
  status: StepStatus;
  message: string;
  /** e.g. `clean`, `no_findings`, `signed`, `satisfied`, `skipped`. */
  value: string;
}

/** Final states an upload can end in. */
export type UploadOutcome = 'published' | 'pending_review' | 'quarantined' | 'rejected';

export interface FindingCounts {
  critical: number;
  high: number;
  medium: number;
  low: number;
  negligible: number;
}

export const noFindings = (): FindingCounts => ({ critical: 0, high: 0, medium: 0, low: 0, negligible: 0 });

/**
 * Everything the steps learn about one upload; each step reads what earlier steps found and adds
 * its own part. A step that ends the upload sets `outcome` and the runner stops there.
 */
export interface UploadState {
  distribution: Distribution;
  /** The APT component the package goes to (`main` for RPM). */
  component: string;
  /** Temp file holding the upload. */
  path: string;
  file: FileFacts;
  /** The upload's first bytes, kept when it was received (the format step reads them, not the file). */
  head?: Buffer | null;
  claimedSha256: string | null;
  pkg: InspectedPackage | null;
  outcome: UploadOutcome | null;
  cveStatus: StoredCveStatus;
  findings: FindingCounts;
  findingDetails: StoredFinding[];
  reasons: string[];
  slaDeadline: string | null;
  /** Set when the identical file is already stored: the upload answers the stored result (200). */
  duplicateOf: string | null;
  /** The package row this upload stored (published, held or quarantined), once it is stored. */
  storedPackageId: string | null;
  /** Why the upload was rejected: the error `code` and human `detail` of its 422 answer. */
  rejection: { code: string; detail: string } | null;
  /** RPM only: whether admission signs the package with the repository key or keeps the signature it arrived with. */
  rpmSignature: 'sign' | 'keep' | null;
  /** RPM only, once admitted: the file the repository serves and whose signature it carries. */
  served: { signed_by: string; sha256: string; size: number } | null;
  /**
   * A source upload's other files (temp files, with the name the client sent each under): the
   * format step checks those the .dsc names against it, and admission stores them with it.
   */
  sourceFiles?: SourceUploadFile[];
  /**
   * Settles once the temp files are on disk: their fsync runs while the steps read them, and
   * admission waits for it before moving them into the store. Absent: they already are.
   */
  durable?: Promise<unknown>;
}

/** One extra file of a source upload, received into a temp file. */
export interface SourceUploadFile {
  name: string;
  path: string;
  facts: FileFacts;
}

/** Ends the upload as `rejected`: nothing is kept but the audit entry, the answer carries code and detail. */
export function rejectUpload(state: UploadState, code: string, message: string): void {
  state.outcome = 'rejected';
  state.reasons.push(`${code}: ${message}`);
  state.rejection ??= { code, detail: message.charAt(0).toUpperCase() + message.slice(1) };
}

export interface PipelineStep {
  name: StepName;
  run(state: UploadState): Promise<StepResult>;
}

export interface PipelineObserver {
  stepStarted?(name: StepName): void;
  stepFinished?(result: StepResult): void;
}
