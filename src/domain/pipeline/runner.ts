import { STEP_NAMES, type PipelineObserver, type PipelineStep, type StepResult, type UploadState } from './types.js';

export interface PipelineRun {
  steps: StepResult[];
  state: UploadState;
}

/**
 * Runs the steps in order. A step that decides the upload's fate (rejected, quarantined, a
 * duplicate) stops the run; the remaining steps are reported `skipped` so every answer lists
 * all six steps.
 */
export async function runPipeline(steps: readonly PipelineStep[], state: UploadState, observer: PipelineObserver = {}): Promise<PipelineRun> {
  const ordered = [...steps].sort((a, b) => STEP_NAMES.indexOf(a.name) - STEP_NAMES.indexOf(b.name));
  const results: StepResult[] = [];
  let stopped = false;
  for (const step of ordered) {
    if (stopped) {
      const skipped: StepResult = { name: step.name, status: 'skipped', message: 'not run: an earlier step decided the outcome', value: 'skipped' };
      results.push(skipped);
      observer.stepFinished?.(skipped);
      continue;
    }
    observer.stepStarted?.(step.name);
    const result = await step.run(state);
    results.push(result);
    observer.stepFinished?.(result);
    const terminal = state.outcome === 'rejected' || state.outcome === 'quarantined' || state.duplicateOf !== null;
    if (terminal) stopped = true;
  }
  return { steps: results, state };
}

/** The `pipeline` object of the upload answer: one short value per step. */
export function pipelineSummary(steps: readonly StepResult[]): Record<string, string> {
  const value = (name: string) => steps.find((s) => s.name === name)?.value ?? 'skipped';
  return {
    format: value('format'),
    provenance: value('provenance'),
    antivirus: value('antivirus'),
    cve_scan: value('cve'),
    gpg: value('signature'),
    dependencies: value('dependencies'),
  };
}
