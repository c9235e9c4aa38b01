import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { positiveInteger, runs, seg } from '../runtime.js';

const ACTIONS = ['accept_risk', 'exception', 'upgrade_required', 'reject'] as const;
type Action = (typeof ACTIONS)[number];

interface DecideOptions {
  action: string;
  justification: string;
  expiresDays?: number;
  targetVersion?: string;
  arch?: string;
  dist?: string;
  cve?: string[];
}

/**
 * The contract's rules, checked before the request so a pipeline gets a usage error (exit 1)
 * with the rule rather than a 422: a non-blank justification always; an expiry required for an
 * exception and refused for a rejection; a target version for upgrade_required.
 */
export function decisionBody(opts: DecideOptions): Record<string, unknown> {
  if (!ACTIONS.includes(opts.action as Action)) throw new UsageError(`--action must be one of ${ACTIONS.join(', ')}`);
  if (!opts.justification?.trim()) throw new UsageError('--justification must not be blank');
  if (opts.action === 'exception' && opts.expiresDays === undefined) throw new UsageError('an exception needs --expires-days');
  if (opts.action === 'reject' && opts.expiresDays !== undefined) throw new UsageError('a rejection never expires: drop --expires-days');
  if (opts.action === 'upgrade_required' && !opts.targetVersion) throw new UsageError('upgrade_required needs --target-version');
  return {
    action: opts.action,
    justification: opts.justification,
    ...(opts.expiresDays !== undefined ? { expires_in_days: opts.expiresDays } : {}),
    ...(opts.targetVersion ? { target_version: opts.targetVersion } : {}),
    ...(opts.arch ? { arch: opts.arch } : {}),
    ...(opts.cve?.length ? { cve_ids: opts.cve } : {}),
  };
}

export function registerReviewCommands(program: Command): void {
  const review = program.command('review').description('The review queue and decisions on held packages');

  review
    .command('list')
    .description('Packages awaiting a decision: KEV first, then EPSS, then CVSS (or by SLA deadline)')
    .option('-d, --dist <codename>')
    .option('--sort <order>', 'risk | sla', 'risk')
    .option('--status <status>', 'pending_review | upgrade_required | all')
    .action(runs(async (rt, opts: { dist?: string; sort: string; status?: string }) => {
      const client = await rt.client();
      const items = await client.all<Record<string, unknown>>('/security/review-queue', { distribution: opts.dist, sort: opts.sort, status: opts.status });
      rt.out.result(items, () => rt.out.table(items, ['name', 'version', 'arch', ['distribution', 'DIST'], 'status', ['worst_severity', 'WORST'], ['in_kev', 'KEV'], 'epss', ['sla_remaining_days', 'SLA DAYS']]));
      return EXIT.ok;
    }));

  review
    .command('decide')
    .description('Record a decision on a held version (admin, or maintainer when the service allows it)')
    .argument('<name>')
    .argument('<version>')
    .requiredOption('--action <action>', ACTIONS.join(' | '))
    .requiredOption('--justification <text>')
    .option('--expires-days <days>', 'for accept_risk (optional) and exception (required)', positiveInteger)
    .option('--target-version <version>', 'for upgrade_required')
    .option('--arch <arch>', 'when the version exists for several architectures')
    .option('--cve <ids...>', 'the CVEs the decision covers (default: all of the version\'s findings)')
    .action(runs(async (rt, name: string, version: string, opts: DecideOptions) => {
      const body = decisionBody(opts);
      const client = await rt.client();
      const answer = await client.post<{ status?: string; items?: Array<{ status: string }> }>(`/security/packages/${seg(name)}/${seg(version)}/decide`, body);
      const status = answer.status ?? answer.items?.[0]?.status ?? 'unknown';
      rt.out.result(answer, () => `${name} ${version}: ${opts.action} recorded, now ${rt.out.status(status)}`);
      return EXIT.ok;
    }));
}
