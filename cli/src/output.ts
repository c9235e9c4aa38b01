/**
 * How answers are shown: JSON on stdout for machines (`--json`), a table or a few lines for
 * people. Colours only when the stream is a terminal and NO_COLOR is unset; progress and
 * messages go to stderr so stdout stays clean for pipes.
 */
import pc from 'picocolors';

export type Colours = ReturnType<typeof pc.createColors>;

export class Output {
  readonly colours: Colours;
  readonly errColours: Colours;

  constructor(readonly json: boolean, private readonly stdout: NodeJS.WriteStream = process.stdout, private readonly stderr: NodeJS.WriteStream = process.stderr) {
    const allowed = !('NO_COLOR' in process.env) && process.env.TERM !== 'dumb';
    this.colours = pc.createColors(allowed && this.stdout.isTTY === true);
    this.errColours = pc.createColors(allowed && this.stderr.isTTY === true);
  }

  /** Whether progress lines are wanted: on a terminal, never in JSON mode. */
  get interactive(): boolean {
    return !this.json && this.stderr.isTTY === true;
  }

  /** The machine answer (JSON mode) or the people's rendering of it. */
  result(value: unknown, render: () => string): void {
    this.stdout.write(this.json ? `${JSON.stringify(value, null, 2)}\n` : ensureNewline(render()));
  }

  /** A line for people on stderr (progress, notices); silent in JSON mode. */
  note(line: string): void {
    if (!this.json) this.stderr.write(ensureNewline(line));
  }

  error(message: string): void {
    this.stderr.write(ensureNewline(`${this.errColours.red('error:')} ${message}`));
  }

  table(rows: ReadonlyArray<Record<string, unknown>>, columns: ReadonlyArray<string | [key: string, title: string]>): string {
    if (rows.length === 0) return '(none)\n';
    const cols = columns.map((c) => (typeof c === 'string' ? [c, c.toUpperCase()] as const : c));
    const cells = rows.map((row) => cols.map(([key]) => cell(row[key])));
    const widths = cols.map(([, title], i) => Math.max(title.length, ...cells.map((r) => r[i]!.length)));
    const line = (values: readonly string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ').trimEnd();
    return [this.colours.bold(line(cols.map(([, title]) => title))), ...cells.map(line)].join('\n') + '\n';
  }

  /** A status word coloured by what it means for a pipeline. */
  status(status: string): string {
    const c = this.colours;
    if (['published', 'accepted_risk', 'exception', 'passed', 'ok'].includes(status)) return c.green(status);
    if (['pending_review', 'upgrade_required', 'warning', 'skipped'].includes(status)) return c.yellow(status);
    if (['quarantined', 'rejected', 'failed'].includes(status)) return c.red(status);
    return status;
  }
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const ensureNewline = (text: string) => (text.endsWith('\n') ? text : `${text}\n`);
