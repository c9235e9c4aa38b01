import type { Command } from 'commander';
import type { ApiClient } from '../client.js';
import { UsageError } from '../errors.js';
import { EXIT, exitCodeForStatus, type ExitCode } from '../exit-codes.js';
import { positiveInteger, runs, seg, type Runtime } from '../runtime.js';

/** One stored version as `GET /artifacts/{name}/{version}` shows it (fields the client reads). */
export interface VersionView {
  name: string;
  version: string;
  arch: string;
  distribution: string;
  status: string;
  cve_status: string;
  findings: Record<string, number>;
  reasons: string[];
  sla_deadline: string | null;
}

export interface PackageSelector {
  name: string;
  version: string;
  distribution?: string;
  arch?: string;
}

export type WaitTarget = 'published' | 'decided';

const INSTALLABLE = new Set(['published', 'accepted_risk', 'exception']);

export async function fetchVersion(client: ApiClient, p: PackageSelector): Promise<VersionView> {
  return client.get<VersionView>(`/artifacts/${seg(p.name)}/${seg(p.version)}`, { distribution: p.distribution, arch: p.arch });
}

/** Whether waiting is over: the package reached the target, or can no longer reach it. */
function settled(status: string, until: WaitTarget): boolean {
  if (until === 'decided') return status !== 'pending_review';
  return INSTALLABLE.has(status) || status === 'quarantined' || status === 'rejected';
}

/**
 * Polls the version until it settles or the time runs out; the exit code is that of the status
 * it ends in (so a timeout while held exits 2).
 */
export async function waitFor(rt: Runtime, p: PackageSelector, until: WaitTarget, timeoutSeconds: number, intervalSeconds: number): Promise<{ view: VersionView; code: ExitCode; timedOut: boolean }> {
  const client = await rt.client();
  const deadline = Date.now() + timeoutSeconds * 1000;
  let view = await fetchVersion(client, p);
  let announced = '';
  while (!settled(view.status, until) && Date.now() < deadline) {
    if (announced !== view.status) {
      rt.out.note(`${view.name} ${view.version} (${view.distribution}) is ${rt.out.status(view.status)}: waiting until ${until}…`);
      announced = view.status;
    }
    await new Promise((r) => setTimeout(r, Math.min(intervalSeconds * 1000, Math.max(0, deadline - Date.now()))));
    view = await fetchVersion(client, p);
  }
  return { view, code: exitCodeForStatus(view.status), timedOut: !settled(view.status, until) };
}

export function registerStatusCommands(program: Command): void {
  program
    .command('status')
    .description('Status of a package: every stored version, or one version (then the exit code is its verdict)')
    .argument('<name>')
    .argument('[version]')
    .option('-d, --dist <codename>', 'the distribution, when the version is in several')
    .option('--arch <arch>')
    .action(runs(async (rt, name: string, version: string | undefined, opts: { dist?: string; arch?: string }) => {
      const client = await rt.client();
      if (version) {
        const view = await fetchVersion(client, { name, version, distribution: opts.dist, arch: opts.arch });
        rt.out.result(view, () => describeVersion(rt, view));
        return exitCodeForStatus(view.status);
      }
      const artifact = await client.get<{ name: string; versions: VersionView[] }>(`/artifacts/${seg(name)}`);
      const versions = artifact.versions.filter((v) => (!opts.dist || v.distribution === opts.dist) && (!opts.arch || v.arch === opts.arch));
      rt.out.result({ ...artifact, versions }, () => rt.out.table(versions.map((v) => ({ ...v, status: rt.out.status(v.status) })), ['version', 'arch', ['distribution', 'DIST'], 'status', ['cve_status', 'CVE']]));
      return EXIT.ok;
    }));

  program
    .command('wait')
    .description('Wait until a version is published (or can no longer be), or until a reviewer decided; exits with the verdict')
    .argument('<name>')
    .argument('<version>')
    .option('-d, --dist <codename>')
    .option('--arch <arch>')
    .option('--until <state>', 'published | decided', 'published')
    .option('--timeout <seconds>', 'give up after this long (exit code of the status then)', positiveInteger, 600)
    .option('--interval <seconds>', 'seconds between polls', positiveInteger, 5)
    .action(runs(async (rt, name: string, version: string, opts: { dist?: string; arch?: string; until: string; timeout: number; interval: number }) => {
      if (opts.until !== 'published' && opts.until !== 'decided') throw new UsageError(`--until must be published or decided, not ${opts.until}`);
      const { view, code, timedOut } = await waitFor(rt, { name, version, distribution: opts.dist, arch: opts.arch }, opts.until, opts.timeout, opts.interval);
      if (timedOut) rt.out.note(`gave up after ${opts.timeout} s: still ${view.status}`);
      rt.out.result({ ...view, timed_out: timedOut }, () => describeVersion(rt, view));
      return code;
    }));
}

export function describeVersion(rt: Runtime, v: VersionView): string {
  const counts = Object.entries(v.findings ?? {}).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(', ');
  const lines = [`${v.name} ${v.version} ${v.arch} in ${v.distribution}: ${rt.out.status(v.status)}`, `  CVE: ${v.cve_status}${counts ? ` (${counts})` : ''}`];
  if (v.sla_deadline) lines.push(`  review deadline: ${v.sla_deadline}`);
  for (const reason of v.reasons ?? []) lines.push(`  reason: ${reason}`);
  return lines.join('\n');
}
