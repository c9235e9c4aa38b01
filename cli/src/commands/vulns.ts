import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { EXIT, EXIT_CODES_HELP } from '../exit-codes.js';
import { runs } from '../runtime.js';

const SEVERITIES = ['negligible', 'low', 'medium', 'high', 'critical'] as const;
type Severity = (typeof SEVERITIES)[number];

/** A CVE of `GET /security/vulnerabilities`, with the packages it affects. */
interface Vulnerability {
  cve_id: string;
  severity: Severity;
  cvss_score: number | null;
  epss: number | null;
  in_kev: boolean | null;
  summary: string;
  packages: Array<{ name: string; version: string; arch: string; distribution: string; status: string; fix_state: string; fixed_version: string | null }>;
}

/** A finding counts against the gate in these states: installable, or waiting for a reviewer. */
const GATED_STATUSES = new Set(['published', 'pending_review', 'upgrade_required']);
/** A reviewer accepted these with a justification and an expiry; `--include-accepted` counts them too. */
const ACCEPTED_STATUSES = new Set(['accepted_risk', 'exception']);

export function registerVulnsCommand(program: Command): void {
  program
    .command('vulns')
    .description('CVEs of a distribution\'s packages; with --fail-on, exit 5 when one at or above that severity affects a package that is installable or awaiting review')
    .requiredOption('-d, --dist <codename>')
    .option('--fail-on <severity>', 'critical | high | medium | low | negligible')
    .option('--ignore-unfixed', 'ignore findings with no fixed version (not-fixed, wont-fix)')
    .option('--include-accepted', 'also count packages whose risk a reviewer accepted (accepted_risk, exception)')
    .addHelpText('after', EXIT_CODES_HELP)
    .action(runs(async (rt, opts: { dist: string; failOn?: string; ignoreUnfixed?: boolean; includeAccepted?: boolean }) => {
      if (opts.failOn !== undefined && !SEVERITIES.includes(opts.failOn as Severity)) throw new UsageError(`--fail-on must be one of ${SEVERITIES.join(', ')}`);
      const threshold = opts.failOn === undefined ? null : SEVERITIES.indexOf(opts.failOn as Severity);
      const client = await rt.client();
      const all = await client.all<Vulnerability>('/security/vulnerabilities', { distribution: opts.dist });
      const counted = (status: string) => GATED_STATUSES.has(status) || (opts.includeAccepted === true && ACCEPTED_STATUSES.has(status));
      const rows = all.flatMap((v) => v.packages
        .filter((p) => p.distribution === opts.dist)
        .filter((p) => !opts.ignoreUnfixed || p.fix_state === 'fixed')
        .map((p) => ({ cve_id: v.cve_id, severity: v.severity, kev: v.in_kev ? 'yes' : '', epss: v.epss, package: p.name, version: p.version, status: p.status, fix: p.fix_state === 'fixed' ? p.fixed_version ?? 'fixed' : p.fix_state, counted: counted(p.status) })));
      const violations = threshold === null ? [] : rows.filter((r) => r.counted && SEVERITIES.indexOf(r.severity) >= threshold);
      const answer = { distribution: opts.dist, fail_on: opts.failOn ?? null, findings: rows, violations: violations.length, passed: violations.length === 0 };
      rt.out.result(answer, () => {
        const c = rt.out.colours;
        const table = rt.out.table(rows.map((r) => ({ ...r, severity: ['critical', 'high'].includes(r.severity) ? c.red(r.severity) : r.severity })), [['cve_id', 'CVE'], 'severity', 'kev', 'epss', 'package', 'version', 'status', 'fix']);
        if (threshold === null) return table;
        return `${table}\n${violations.length === 0 ? c.green(`no finding at or above ${opts.failOn}`) : c.red(`${violations.length} finding(s) at or above ${opts.failOn}`)}`;
      });
      return violations.length > 0 ? EXIT.policyViolation : EXIT.ok;
    }));
}
