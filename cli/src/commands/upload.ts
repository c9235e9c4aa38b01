import type { Command } from 'commander';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CliError, UsageError } from '../errors.js';
import { EXIT, EXIT_CODES_HELP, exitCodeForStatus, worstOutcome } from '../exit-codes.js';
import { mapConcurrently } from '../concurrently.js';
import { positiveInteger, runs, type Runtime } from '../runtime.js';
import { waitFor } from './status.js';

interface UploadOptions {
  dist: string;
  sha256?: string;
  wait?: boolean;
  timeout: number;
  interval: number;
  jobs: number;
}

interface StepEvent {
  step: string;
  state: 'started' | 'finished';
  status?: string;
  message?: string;
}

/** What one file came to; `result` is the service's upload answer (or error body). */
interface FileOutcome {
  file: string;
  http_status: number | null;
  status: string | null;
  name?: string;
  version?: string;
  arch?: string;
  distribution?: string;
  error?: string;
  result?: Record<string, unknown>;
}

export function registerUploadCommand(program: Command): void {
  program
    .command('upload')
    .description('Upload .deb or .rpm files, or source packages (a .dsc or source .changes: the files it names are sent from its folder), through the validation pipeline, showing each step as it runs')
    .argument('<files...>')
    .requiredOption('-d, --dist <codename>', 'target distribution')
    .option('--sha256 <digest|auto>', '"auto" sends each file\'s SHA-256 as computed here, so the service checks the bytes it received; a hex digest checks a single file against it')
    .option('--wait', 'when a file is held for review, wait until a reviewer decides')
    .option('--timeout <seconds>', 'with --wait: give up after this long', positiveInteger, 3600)
    .option('--interval <seconds>', 'with --wait: seconds between polls', positiveInteger, 10)
    .option('-j, --jobs <n>', 'files sent at once (the service answers each once its signed index lists it, so one at a time leaves it waiting; results are listed in the order given)', positiveInteger, 4)
    .addHelpText('after', EXIT_CODES_HELP)
    .action(runs(async (rt, files: string[], opts: UploadOptions) => {
      if (opts.sha256 && opts.sha256 !== 'auto') {
        if (!/^[0-9a-fA-F]{64}$/.test(opts.sha256)) throw new UsageError('--sha256 takes "auto" or a 64-digit hex SHA-256');
        if (files.length > 1) throw new UsageError('a literal --sha256 digest applies to one file; use --sha256 auto for several');
      }
      for (const file of files) {
        await access(file).catch(() => { throw new UsageError(`cannot read ${file}`); });
      }
      // One file at a time on a terminal: its line is rewritten as its steps finish. Several at
      // once: a line per file when it is done (interleaved rewrites would garble each other).
      const live = rt.out.interactive && Math.min(opts.jobs, files.length) === 1;
      if (rt.out.interactive && !live) rt.out.note(`${files.length} files, ${Math.min(opts.jobs, files.length)} at a time: a line each as it is done`);
      const settled = await mapConcurrently(files, opts.jobs, async (file) => {
        const outcome = await uploadOne(rt, file, opts, live);
        let code = outcome.status ? exitCodeForStatus(outcome.status) : EXIT.error;
        if (opts.wait && outcome.status === 'pending_review' && outcome.name && outcome.version) {
          const waited = await waitFor(rt, { name: outcome.name, version: outcome.version, distribution: outcome.distribution, arch: outcome.arch }, 'decided', opts.timeout, opts.interval);
          if (waited.timedOut) rt.out.note(`${outcome.name} ${outcome.version}: no decision after ${opts.timeout} s`);
          else rt.out.note(`${outcome.name} ${outcome.version}: decided, now ${rt.out.status(waited.view.status)}`);
          outcome.status = waited.view.status;
          code = waited.code;
        }
        return { outcome, code };
      });
      const outcomes = settled.map((s) => s.outcome);
      const codes = settled.map((s) => s.code);
      rt.out.result(outcomes, () => rt.out.table(outcomes.map((o) => ({ ...o, file: basename(o.file), status: o.status ? rt.out.status(o.status) : rt.out.colours.red('error'), note: o.error ?? '' })), ['file', 'name', 'version', ['distribution', 'DIST'], 'status', 'note']));
      return worstOutcome(codes);
    }));
}

async function uploadOne(rt: Runtime, file: string, opts: UploadOptions, live: boolean): Promise<FileOutcome> {
  const client = await rt.client();
  const fields: Record<string, string> = { distribution: opts.dist };
  const companions = await sourceCompanions(file);
  // For a source .changes the service checks `sha256` against the .dsc it names (the package file).
  const checked = /\.changes$/i.test(file) ? companions.find((c) => c.endsWith('.dsc')) : file;
  if (opts.sha256 === 'auto' && checked) fields.sha256 = await sha256Of(checked);
  else if (opts.sha256 && opts.sha256 !== 'auto') fields.sha256 = opts.sha256.toLowerCase();
  const label = basename(file);
  const progress = new Progress(rt, label, live);
  try {
    const { event, data } = await client.uploadStream(file, fields, (e) => {
      if (e.event === 'step') progress.step(JSON.parse(e.data) as StepEvent);
    }, companions);
    const status = typeof data.status === 'string' && event === 'result' ? data.status : null;
    const outcome: FileOutcome = {
      file, http_status: typeof data.http_status === 'number' ? data.http_status : null, status,
      name: data.name as string | undefined, version: data.version as string | undefined, arch: data.arch as string | undefined,
      distribution: (data.distribution as string | undefined) ?? opts.dist, result: data,
    };
    if (event === 'error' || status === null) outcome.error = typeof data.detail === 'string' ? data.detail : 'the upload failed';
    progress.done(outcome);
    return outcome;
  } catch (error) {
    progress.abort();
    if (error instanceof CliError) rt.out.error(`${label}: ${error.message}`);
    if (error instanceof CliError) return { file, http_status: (error as { status?: number }).status ?? null, status: null, error: error.message };
    throw error;
  }
}

/**
 * A CI log gets one line per step; a terminal one line per file, rewritten as its steps finish
 * when it is the only file under way (`live`), else written once it is done.
 */
class Progress {
  private readonly steps: string[] = [];

  constructor(private readonly rt: Runtime, private readonly label: string, private readonly live: boolean) {}

  step(e: StepEvent): void {
    if (e.state !== 'finished') {
      if (this.live) process.stderr.write(`\r\x1b[2K${this.label}: ${[...this.steps, `${e.step}…`].join(' ')}`);
      return;
    }
    const mark = this.rt.out.status(e.status ?? '');
    this.steps.push(`${e.step} ${mark}`);
    if (this.live) process.stderr.write(`\r\x1b[2K${this.label}: ${this.steps.join(' ')}`);
    else if (!this.rt.out.interactive) this.rt.out.note(`${this.label}: ${e.step} ${mark}${e.message ? ` — ${e.message}` : ''}`);
  }

  done(o: FileOutcome): void {
    if (this.live) process.stderr.write('\r\x1b[2K');
    if (o.status) this.rt.out.note(`${this.label}: ${o.name} ${o.version} ${this.rt.out.status(o.status)} in ${o.distribution}`);
    else this.rt.out.note(`${this.label}: ${this.rt.out.errColours.red('failed')}: ${o.error}`);
  }

  abort(): void {
    if (this.live) process.stderr.write('\n');
  }
}

/**
 * For a source package's .dsc or .changes: the files it names (its Checksums-Sha256 list) that
 * are in its folder, sent with it as `files` parts; a missing one is the service's to report.
 */
async function sourceCompanions(file: string): Promise<string[]> {
  if (!/\.(dsc|changes)$/i.test(file)) return [];
  const text = await readFile(file, 'utf8');
  const list = /^Checksums-Sha256:[ \t]*\r?\n((?:[ \t].*\r?\n?)*)/m.exec(text)?.[1] ?? '';
  const names = list.split('\n').map((l) => l.trim().split(/\s+/)[2]).filter((n): n is string => !!n && /^[A-Za-z0-9][A-Za-z0-9.+~_-]*$/.test(n) && !/\.(u|d)?deb$/.test(n));
  const found: string[] = [];
  for (const name of names) {
    const path = join(dirname(file), name);
    if (await access(path).then(() => true, () => false)) found.push(path);
  }
  return found;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
