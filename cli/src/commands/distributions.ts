import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { runs } from '../runtime.js';

interface Copied {
  name: string;
  version: string;
  arch: string;
  distribution?: string;
  status?: string;
}

export function registerDistributionCommands(program: Command): void {
  program
    .command('promote')
    .description('Copy one version into another distribution of the same format, without re-upload or re-scan; both indexes are re-signed')
    .argument('<name>')
    .argument('<version>')
    .requiredOption('--from <codename>')
    .requiredOption('--to <codename>')
    .option('--arch <arch>')
    .action(runs(async (rt, name: string, version: string, opts: { from: string; to: string; arch?: string }) => {
      const client = await rt.client();
      const answer = await client.post<{ promoted: Copied[] }>('/distributions/promote', { name, version, arch: opts.arch, from_distribution: opts.from, to_distribution: opts.to });
      rt.out.result(answer, () => rt.out.table(answer.promoted as unknown as Array<Record<string, unknown>>, ['name', 'version', 'arch', ['distribution', 'DIST'], 'status']));
      return EXIT.ok;
    }));

  program
    .command('migrate')
    .description('Copy packages (all of them, or the names given) from one distribution to another; the source keeps them')
    .argument('[names...]')
    .requiredOption('--from <codename>')
    .requiredOption('--to <codename>')
    .action(runs(async (rt, names: string[], opts: { from: string; to: string }) => {
      const client = await rt.client();
      const answer = await client.post<{ migrated: number; items: Copied[] }>('/distributions/migrate', { from_distribution: opts.from, to_distribution: opts.to, ...(names.length ? { packages: names } : {}) });
      rt.out.result(answer, () => `${answer.migrated} package(s) copied from ${opts.from} to ${opts.to}\n${rt.out.table(answer.items as unknown as Array<Record<string, unknown>>, ['name', 'version', 'arch', 'status'])}`);
      return EXIT.ok;
    }));
}
