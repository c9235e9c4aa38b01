import type { PipelineStep } from '../../domain/pipeline/types.js';
import { handlerFor } from '../formats/index.js';
import type { ProvidesLookup } from '../formats/types.js';
import { providesLookup } from '../packages/provides.js';
import type { PipelineDeps } from './deps.js';

/**
 * Step 6: can a client install it from this distribution? Depends/Pre-Depends (deb) or Requires
 * (rpm) against what the distribution publishes. Missing dependencies are reported, not blocking:
 * they may be uploaded next. Those the distribution's synced import catalogs offer are named as
 * importable (`POST /import/fetch` brings them with their own dependencies).
 */
export function dependenciesStep(deps: Pick<PipelineDeps, 'db' | 'catalogs'>): PipelineStep {
  return {
    name: 'dependencies',
    async run(state) {
      const pkg = state.pkg!;
      const handler = handlerFor(pkg.format);
      const published = providesLookup(deps.db, state.distribution.codename);
      const report = await handler.checkDependencies(pkg, published, state.distribution);
      if (report.all_satisfied) return { name: 'dependencies', status: 'passed', message: 'all dependencies are published in the distribution', value: 'satisfied' };
      let message = `missing in ${state.distribution.codename}: ${report.missing.map((m) => m.relation).join('; ')}`;
      let value = 'missing';
      const offered = await deps.catalogs.lookup(state.distribution.codename);
      if (offered) {
        const either: ProvidesLookup = async (names) => [...(await published(names)), ...(await offered(names))];
        const withCatalogs = await handler.checkDependencies(pkg, either, state.distribution);
        const stillMissing = new Set(withCatalogs.missing.map((m) => m.relation));
        const importable = report.missing.filter((m) => !stillMissing.has(m.relation)).map((m) => m.relation);
        if (importable.length > 0) message += `; importable from the synced catalogs: ${importable.join('; ')}`;
        if (withCatalogs.all_satisfied) value = 'importable';
      }
      return { name: 'dependencies', status: 'warning', message, value };
    },
  };
}
