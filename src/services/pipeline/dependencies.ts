import type { PipelineStep } from '../../domain/pipeline/types.js';
import { handlerFor } from '../formats/index.js';
import { providesLookup } from '../packages/provides.js';
import type { PipelineDeps } from './deps.js';

/**
 * Step 6: can a client install it from this distribution? Depends/Pre-Depends (deb) or Requires
 * (rpm) against what the distribution publishes. Missing dependencies are reported, not blocking:
 * they may be uploaded next.
 */
export function dependenciesStep(deps: Pick<PipelineDeps, 'db'>): PipelineStep {
  return {
    name: 'dependencies',
    async run(state) {
      const pkg = state.pkg!;
      const report = await handlerFor(pkg.format).checkDependencies(pkg, providesLookup(deps.db, state.distribution.codename), state.distribution);
      if (report.all_satisfied) return { name: 'dependencies', status: 'passed', message: 'all dependencies are published in the distribution', value: 'satisfied' };
      const list = report.missing.map((m) => m.relation).join('; ');
      return { name: 'dependencies', status: 'warning', message: `missing in ${state.distribution.codename}: ${list}`, value: 'missing' };
    },
  };
}
