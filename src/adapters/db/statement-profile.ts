/**
 * Where SQLite's time goes, statement by statement: with `SQL_PROFILE_FILE` set, every prepared
 * statement counts its runs and the time they took (better-sqlite3 runs them on the event loop,
 * so that time is the event loop's), and the table is written when the database closes. For
 * benchmarks (README: Benchmarks); off by default, and then the statements are SQLite's own
 * objects, untouched.
 */
import { writeFileSync } from 'node:fs';
import type { SqliteStatement } from 'kysely';

interface Tally {
  runs: number;
  ms: number;
}

/** The methods Kysely's SQLite driver calls to run a statement. */
const RUNNERS = new Set<PropertyKey>(['all', 'run', 'get', 'iterate']);

export class StatementProfile {
  private readonly tallies = new Map<string, Tally>();

  constructor(private readonly path: string) {}

  /** `statement`, its runs counted under `sql`. */
  watch(sql: string, statement: SqliteStatement): SqliteStatement {
    let tally = this.tallies.get(sql);
    if (!tally) this.tallies.set(sql, (tally = { runs: 0, ms: 0 }));
    const counted = tally;
    return new Proxy(statement, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (typeof value !== 'function') return value;
        if (!RUNNERS.has(key)) return (value as (...a: unknown[]) => unknown).bind(target);
        return (...args: unknown[]) => {
          const started = performance.now();
          try {
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          } finally {
            // An iterator's rows are read after it returns: its count is the statement's start only.
            counted.runs += 1;
            counted.ms += performance.now() - started;
          }
        };
      },
    });
  }

  /** Tab-separated: total ms, runs, ms per run, the SQL text on one line; the costliest first. */
  table(): string {
    const rows = [...this.tallies].filter(([, t]) => t.runs > 0).sort((a, b) => b[1].ms - a[1].ms);
    const lines = rows.map(([sql, t]) => [t.ms.toFixed(1), String(t.runs), (t.ms / t.runs).toFixed(3), sql.replace(/\s+/g, ' ')].join('\t'));
    return ['total_ms\truns\tms_per_run\tsql', ...lines].join('\n') + '\n';
  }

  write(): void {
    writeFileSync(this.path, this.table(), { mode: 0o600 });
  }
}
