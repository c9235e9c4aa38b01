import type { PipelineObserver, StepName, StepResult } from '../domain/pipeline/types.js';

/**
 * An upload's `Server-Timing` header (W3C Server Timing): how long receiving the form took (the
 * multipart parse, four digests and the temp file), each pipeline step that ran (`signature`
 * includes the admission and waiting for the signed index), and what followed (the pipeline
 * record, audit and listeners). Browsers show it in their network panel; benchmarks read it.
 */
export class UploadTiming implements PipelineObserver {
  private readonly began = performance.now();
  private receivedAt: number | null = null;
  private readonly stepStarts = new Map<StepName, number>();
  private readonly spans: Array<{ name: string; ms: number }> = [];

  constructor(private readonly inner: PipelineObserver = {}) {}

  /** The form is read; the pipeline starts. */
  received(): void {
    this.receivedAt = performance.now();
    this.spans.push({ name: 'receive', ms: this.receivedAt - this.began });
  }

  stepStarted(name: StepName): void {
    this.stepStarts.set(name, performance.now());
    this.inner.stepStarted?.(name);
  }

  stepFinished(result: StepResult): void {
    const started = this.stepStarts.get(result.name);
    // Steps reported skipped after an earlier one decided the outcome never started.
    if (started !== undefined) this.spans.push({ name: result.name, ms: performance.now() - started });
    this.inner.stepFinished?.(result);
  }

  /** The header value, `total` last; called when the answer is ready. */
  header(): string {
    const now = performance.now();
    const accounted = this.spans.reduce((sum, s) => sum + s.ms, 0);
    const spans = this.receivedAt === null ? this.spans : [...this.spans, { name: 'finish', ms: Math.max(0, now - this.began - accounted) }];
    return [...spans, { name: 'total', ms: now - this.began }].map((s) => `${s.name};dur=${s.ms.toFixed(1)}`).join(', ');
  }
}
