import type { Command } from 'commander';
import { EXIT, exitCodeForStatus, worstOutcome, type ExitCode } from '../exit-codes.js';
import { positiveInteger, runs, seg } from '../runtime.js';

interface ImportedPackage {
  name: string;
  version: string;
  arch: string;
  distribution: string;
  status: string;
  required_by: string | null;
  detail: string | null;
}

interface ImportReport {
  group: string;
  packages: ImportedPackage[];
  unsatisfiable: Array<{ required_by: string; relation: string; reason: string }>;
}

/** An import outcome's exit code; a package already stored counts as a success, `failed` as an error (1). */
const codeOf = (status: string): ExitCode => (status === 'already_present' ? EXIT.ok : exitCodeForStatus(status));

export function registerImportCommands(program: Command): void {
  const imports = program.command('import').description('Packages from the configured upstream repositories');

  imports
    .command('search')
    .description('Search the synced upstream catalogs by name')
    .argument('<query>')
    .option('--source <id>')
    .option('--limit <n>', 'at most this many', positiveInteger, 50)
    .action(runs(async (rt, query: string, opts: { source?: string; limit: number }) => {
      const client = await rt.client();
      const answer = await client.get<{ items: Array<Record<string, unknown>>; total: number }>('/import/search', { q: query, source_id: opts.source, per_page: opts.limit });
      rt.out.result(answer, () => `${rt.out.table(answer.items, ['name', 'version', 'arch', ['source_id', 'SOURCE'], 'summary'])}${answer.total > answer.items.length ? `(${answer.total} in all)\n` : ''}`);
      return EXIT.ok;
    }));

  imports
    .command('resolve')
    .description('The dependency closure an import of NAME would bring in')
    .argument('<name>')
    .option('-d, --dist <codename>')
    .option('--arch <arch>')
    .option('--version <version>')
    .action(runs(async (rt, name: string, opts: { dist?: string; arch?: string; version?: string }) => {
      const client = await rt.client();
      const answer = await client.get<{ packages?: Array<Record<string, unknown>>; missing?: unknown[] } & Record<string, unknown>>(`/import/resolve/${seg(name)}`, { distribution: opts.dist, arch: opts.arch, version: opts.version });
      rt.out.result(answer, () => rt.out.table(answer.packages ?? [], ['name', 'version', 'arch', ['required_by', 'REQUIRED BY']]));
      return EXIT.ok;
    }));

  imports
    .command('fetch')
    .description('Import a package (and, unless --no-deps, what it needs) through the validation pipeline')
    .argument('<name>')
    .requiredOption('-d, --dist <codename>')
    .option('--version <version>')
    .option('--arch <arch>')
    .option('--no-deps', 'only the package itself')
    .option('--group <name>', 'record the imported packages under this group')
    .action(runs(async (rt, name: string, opts: { dist: string; version?: string; arch?: string; deps: boolean; group?: string }) => {
      const client = await rt.client();
      const report = await client.post<ImportReport>('/import/fetch', { name, version: opts.version, arch: opts.arch, distribution: opts.dist, with_dependencies: opts.deps, group: opts.group });
      rt.out.result(report, () => rt.out.table(report.packages.map((p) => ({ ...p, status: rt.out.status(p.status) })), ['name', 'version', 'arch', 'status', ['required_by', 'REQUIRED BY'], 'detail']));
      for (const u of report.unsatisfiable) rt.out.note(`unsatisfiable: ${u.relation} (required by ${u.required_by}): ${u.reason}`);
      return worstOutcome(report.packages.map((p) => codeOf(p.status)));
    }));
}
