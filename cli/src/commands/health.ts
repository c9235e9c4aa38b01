import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { runs } from '../runtime.js';

interface Component {
  ok: boolean;
  configured: boolean;
  detail?: string;
  [field: string]: unknown;
}

interface HealthReport {
  status: string;
  version: string;
  edition: string;
  uptime_seconds: number;
  components: Record<string, Component>;
}

/** The fields a component reports beyond ok/configured/detail (version, key_count, latency_ms…), as `name=value`. */
const extras = (c: Component) =>
  Object.entries(c)
    .filter(([k, v]) => !['ok', 'configured', 'detail'].includes(k) && v !== null && typeof v !== 'object')
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');

export function registerHealthCommand(program: Command): void {
  program
    .command('health')
    .description('The service\'s health report, component by component; exits 1 when it is degraded (a configured critical component fails) or unreachable')
    .action(runs(async (rt) => {
      const client = await rt.client();
      const report = await client.get<HealthReport>('/health');
      const { colours } = rt.out;
      rt.out.result(report, () => {
        const state = (c: Component) => (!c.configured ? colours.dim('not configured') : c.ok ? colours.green('ok') : colours.red('failing'));
        const rows = Object.entries(report.components).map(([name, c]) => ({ component: name, state: state(c), detail: [c.detail, extras(c)].filter(Boolean).join('; ') }));
        const headline = `${report.status === 'ok' ? colours.green('ok') : colours.red(report.status)}: Tollgate ${report.version} (${report.edition}), up ${Math.round(report.uptime_seconds)} s`;
        return `${headline}\n${rt.out.table(rows, ['component', 'state', 'detail'])}`;
      });
      return report.status === 'ok' ? EXIT.ok : EXIT.error;
    }));
}
