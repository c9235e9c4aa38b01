import type { PipelineStep } from '../../domain/pipeline/types.js';
import type { PipelineDeps } from './deps.js';

/** Step 4: vulnerability scan with EPSS/KEV enrichment, then the per-severity policy. */
export function cveStep(deps: Pick<PipelineDeps, 'cve'>): PipelineStep {
  return {
    name: 'cve',
    async run(state) {
      const assessment = await deps.cve.assess(state.pkg!, state.distribution, state.path);
      if (!assessment) {
        state.cveStatus = 'not_scanned';
        return { name: 'cve', status: 'skipped', message: 'no vulnerability database configured (settings vuln_feeds, then POST /import/sync-security)', value: 'skipped' };
      }
      state.cveStatus = assessment.cveStatus;
      state.findings = assessment.counts;
      state.findingDetails = assessment.findings;
      state.reasons.push(...assessment.reasons);
      state.slaDeadline = assessment.slaDeadline;
      if (assessment.outcome !== 'published') state.outcome = assessment.outcome;
      const status = assessment.outcome === 'published' ? (assessment.cveStatus === 'warnings' ? 'warning' : 'passed') : 'failed';
      return { name: 'cve', status, message: assessment.message, value: assessment.cveStatus };
    },
  };
}

/** The scanner used until a vulnerability database exists: it reports that it cannot scan. */
export const noCveScanner = { assess: async () => null };
