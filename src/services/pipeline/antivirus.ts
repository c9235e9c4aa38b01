import type { PipelineStep } from '../../domain/pipeline/types.js';
import { handlerFor } from '../formats/index.js';
import type { PipelineDeps } from './deps.js';

/**
 * Step 3: every part of the package through clamd. Not configured → `skipped` (never a silent
 * `clean`); configured but not answering → the scanner throws `antivirus_unavailable` (503) and
 * the upload stores nothing.
 */
export function antivirusStep(deps: Pick<PipelineDeps, 'antivirus'>): PipelineStep {
  return {
    name: 'antivirus',
    async run(state) {
      if (!deps.antivirus) return { name: 'antivirus', status: 'skipped', message: 'antivirus not configured (CLAMAV_SOCKET or CLAMAV_HOST)', value: 'skipped' };
      const pkg = state.pkg!;
      const units = handlerFor(pkg.format).scanUnits(state.path, pkg, new Map((state.sourceFiles ?? []).map((f) => [f.name, f.path])));
      for (const unit of units) {
        const verdict = await deps.antivirus.scanStream(unit.open(), unit.name);
        if (!verdict.clean) {
          state.outcome = 'quarantined';
          state.reasons.push(`antivirus: ${verdict.signature} found in ${unit.name}`);
          return { name: 'antivirus', status: 'failed', message: `${verdict.signature} found in ${unit.name}`, value: 'infected' };
        }
      }
      return { name: 'antivirus', status: 'passed', message: `no threat found in ${units.length} part(s)`, value: 'clean' };
    },
  };
}
