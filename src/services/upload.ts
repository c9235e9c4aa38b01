import type { AuditLog } from '../adapters/audit/audit-log.js';
import { packageById, updatePackagePipeline, type PackageRow } from '../adapters/db/packages.table.js';
import type { Metrics } from '../adapters/metrics/metrics.js';
import type { HashedTempFile } from '../adapters/storage/hash-stream.js';
import { componentFor, findDistribution } from '../domain/distributions.js';
import { DomainError } from '../domain/errors.js';
import { pipelineSummary, runPipeline } from '../domain/pipeline/runner.js';
import { noFindings, type PipelineObserver, type StepResult, type UploadState } from '../domain/pipeline/types.js';
import type { UploadResult } from '../domain/pipeline/upload-result.js';
import { admitPackage } from './packages/admission.js';
import { antivirusStep } from './pipeline/antivirus.js';
import { cveStep } from './pipeline/cve.js';
import { dependenciesStep } from './pipeline/dependencies.js';
import type { PipelineDeps } from './pipeline/deps.js';
import { formatStep } from './pipeline/format.js';
import { provenanceStep } from './pipeline/provenance.js';
import { signatureStep } from './pipeline/signature.js';

export interface UploadInput {
  distribution: string;
  /** APT component; default: the distribution's first. */
  component?: string | null;
  file: HashedTempFile;
  /** A source package's other files (the .dsc or .changes is `file`). */
  sourceFiles?: Array<{ name: string; file: HashedTempFile }>;
  claimedSha256: string | null;
  user: string | null;
  ip: string | null;
  /** How the audit entry is written: imports are recorded as IMPORT with their provenance (default UPLOAD). */
  audit?: { action: 'IMPORT'; detail: string };
  /**
   * Called once the package's row is stored (or found to be a duplicate), before the upload
   * waits for the signed index to list it: from then on other uploads' dependency checks see it.
   * Not called for an upload rejected or quarantined before that.
   */
  onAdmitted?: () => void;
}

/** The upload answer body, typed from the schema the HTTP layer serialises it with (domain/pipeline/upload-result.ts). */
export type { UploadResult };

export interface UploadAnswer {
  httpStatus: 200 | 201 | 422;
  body: UploadResult;
  /** The row this upload stored (201, or a quarantined 422), or the one it duplicates (200); null when nothing is stored. */
  packageId: string | null;
}

/** The answer for a package already stored: what its upload reported, with its current status. */
export function storedResult(row: PackageRow): UploadResult {
  const steps = JSON.parse(row.pipeline) as StepResult[];
  const findings = JSON.parse(row.findings) as { counts?: Record<string, number> };
  return {
    status: row.status,
    name: row.name,
    package: row.name,
    version: row.version,
    arch: row.arch,
    distribution: row.distribution,
    sha256: row.upload_sha256,
    size: row.upload_size,
    cve_status: row.cve_status,
    pipeline: pipelineSummary(steps),
    steps: steps.map(({ name, status, message }) => ({ name, status, message })),
    findings: findings.counts ?? { ...noFindings() },
    reasons: JSON.parse(row.reasons) as string[],
    ...servedFile(row),
  };
}

/** For an RPM, the file the repository serves: signed by its key, or kept with the upload's own signature. */
function servedFile(row: Pick<PackageRow, 'signed_by' | 'sha256' | 'size'>): Pick<UploadResult, 'signature'> {
  return row.signed_by ? { signature: { signed_by: row.signed_by, sha256: row.sha256, size: row.size } } : {};
}

/** Told about every package an upload stored (not duplicates): the security service indexes its findings and notifies a review. */
export type UploadStoredListener = (stored: { packageId: string; body: UploadResult; user: string | null }) => Promise<void>;

/** receive → validate (the six steps) → store → decide status → publish, the audit entry written meanwhile. */
export class UploadService {
  private readonly storedListeners: UploadStoredListener[] = [];
  private running = 0;

  /** Uploads between their form and their answer, now (background work yields to them). */
  get inFlight(): number {
    return this.running;
  }

  /** Registers a listener called after a package is stored and audited; its failures are logged, never thrown. */
  onStored(listener: UploadStoredListener): void {
    this.storedListeners.push(listener);
  }

  constructor(
    private readonly deps: Omit<PipelineDeps, 'uploadedBy' | 'onAdmitted'>,
    private readonly audit: AuditLog,
    private readonly metrics: Metrics,
  ) {}

  async upload(input: UploadInput, observer: PipelineObserver = {}): Promise<UploadAnswer> {
    this.running++;
    try {
      return await this.admit(input, observer);
    } finally {
      this.running--;
    }
  }

  private async admit(input: UploadInput, observer: PipelineObserver): Promise<UploadAnswer> {
    const distribution = findDistribution(input.distribution);
    let component: string;
    try {
      if (!distribution) throw new DomainError('invalid', 'unknown_distribution', `Unknown distribution ${input.distribution}`);
      component = componentFor(distribution, input.component);
    } catch (error) {
      await this.discardAll(input);
      throw error;
    }
    // Written while the upload waits for the signed index, once its row is stored: the entry
    // says what the row holds (status, digests, reasons), which no later step changes.
    const early: { audit: Promise<void> | null } = { audit: null };
    const onAdmitted = () => {
      if (state.storedPackageId && !state.duplicateOf) {
        early.audit = this.record(input, this.answer(state, []));
        // Awaited before any answer, an error included (the row is stored all the same).
        early.audit.catch(() => undefined);
      }
      input.onAdmitted?.();
    };
    const deps: PipelineDeps = { ...this.deps, uploadedBy: input.user, onAdmitted };
    const signature = signatureStep(deps);
    const durable = Promise.all([input.file.durable, ...(input.sourceFiles ?? []).map((f) => f.file.durable)]);
    // Admission awaits it; an upload rejected before never does.
    durable.catch(() => undefined);
    const state: UploadState = {
      distribution,
      component,
      path: input.file.path,
      file: { size: input.file.size, md5: input.file.md5, sha1: input.file.sha1, sha256: input.file.sha256, sha512: input.file.sha512 },
      head: input.file.head ?? null,
      claimedSha256: input.claimedSha256?.toLowerCase() ?? null,
      pkg: null,
      outcome: null,
      cveStatus: 'not_scanned',
      findings: noFindings(),
      findingDetails: [],
      reasons: [],
      slaDeadline: null,
      duplicateOf: null,
      storedPackageId: null,
      rejection: null,
      rpmSignature: null,
      served: null,
      sourceFiles: (input.sourceFiles ?? []).map(({ name, file }) => ({
        name,
        path: file.path,
        facts: { size: file.size, md5: file.md5, sha1: file.sha1, sha256: file.sha256, sha512: file.sha512 },
      })),
      durable,
    };
    try {
      const steps = [formatStep(deps), provenanceStep(deps), antivirusStep(deps), cveStep(deps), signature, dependenciesStep(deps)];
      const run = await runPipeline(steps, state, observer);
      // A detected or blocked package keeps its file in quarantine and its row for review.
      if (state.outcome === 'quarantined' && !state.storedPackageId) {
        const admission = await admitPackage(deps, state, 'quarantined', input.user);
        if (admission.kind === 'duplicate') state.duplicateOf = admission.id;
        else state.storedPackageId = admission.id;
      }
      if (state.duplicateOf) {
        const row = await packageById(this.deps.db, state.duplicateOf);
        return { httpStatus: 200, body: storedResult(row!), packageId: row!.id };
      }
      const storedId = state.storedPackageId;
      const body = this.answer(state, run.steps);
      // The step record and the audit entry side by side (an admitted upload's is under way already).
      await Promise.all([
        storedId ? updatePackagePipeline(this.deps.db, storedId, JSON.stringify(run.steps), JSON.stringify(state.reasons)) : null,
        early.audit ?? this.record(input, body),
      ]);
      if (storedId) {
        for (const listener of this.storedListeners) {
          await listener({ packageId: storedId, body, user: input.user }).catch((err: unknown) => this.deps.log.error({ err, package: body.name }, 'upload listener failed'));
        }
      }
      return { httpStatus: body.status === 'rejected' ? 422 : 201, body, packageId: storedId ?? null };
    } catch (error) {
      // A publish that failed after the row was stored: the entry is on disk before the error is answered.
      await early.audit?.catch(() => undefined);
      throw error;
    } finally {
      // Whatever was not moved into the store or quarantine is not kept.
      await this.discardAll(input);
    }
  }

  private async discardAll(input: UploadInput): Promise<void> {
    await this.deps.files.discard(input.file.path);
    for (const f of input.sourceFiles ?? []) await this.deps.files.discard(f.file.path);
  }

  private answer(state: UploadState, steps: StepResult[]): UploadResult {
    const pkg = state.pkg;
    return {
      status: state.outcome ?? 'rejected',
      name: pkg?.name ?? null,
      package: pkg?.name ?? null,
      version: pkg?.version ?? null,
      arch: pkg?.arch ?? null,
      distribution: state.distribution.codename,
      sha256: state.file.sha256,
      size: state.file.size,
      cve_status: state.cveStatus,
      pipeline: pipelineSummary(steps),
      steps: steps.map(({ name, status, message }) => ({ name, status, message })),
      findings: { ...state.findings },
      reasons: state.reasons,
      ...(state.served ? { signature: state.served } : {}),
      ...(state.outcome === 'rejected' || !state.outcome ? state.rejection ?? { detail: 'The package was rejected', code: 'rejected' } : {}),
    };
  }

  private async record(input: UploadInput, body: UploadResult): Promise<void> {
    this.metrics.uploads.inc({ status: body.status });
    const result = body.status === 'published' ? 'SUCCESS' : body.status === 'rejected' ? 'FAILURE' : 'WARNING';
    const detail = `distribution=${body.distribution}; status=${body.status}; sha256=${body.sha256}${body.reasons.length ? `; reasons=${body.reasons.join(' | ')}` : ''}${input.audit ? `; ${input.audit.detail}` : ''}`;
    await this.audit.record({ action: input.audit?.action ?? 'UPLOAD', user: input.user, result, package: body.name, version: body.version, detail, ip: input.ip });
  }
}
