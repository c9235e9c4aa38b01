/** Running external programs in benchmarks: wall time and the child's peak RSS. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What {@link runMeasured} observed. */
export interface MeasuredRun {
  /** Wall-clock time, milliseconds (includes the ~1 ms of /usr/bin/time). */
  ms: number;
  /** Peak RSS of the program (and its waited-for children), bytes; from GNU time's `%M`. */
  peakRssBytes: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` under GNU `/usr/bin/time` (which reports the child's maximum resident set
 * size from wait4's rusage) and times it; throws if the program fails.
 */
export async function runMeasured(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<MeasuredRun> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-time-'));
  try {
    const report = join(dir, 'time.txt');
    const start = performance.now();
    const { stdout, stderr } = await run('/usr/bin/time', ['-o', report, '-f', '%M', command, ...args], {
      cwd: options.cwd,
      env: options.env,
      maxBuffer: 256 * 1024 * 1024,
    });
    const ms = performance.now() - start;
    const kib = Number((await readFile(report, 'utf8')).trim().split('\n').pop());
    return { ms, peakRssBytes: kib * 1024, stdout, stderr };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs a program and returns its stdout; throws with its stderr if it fails. */
export async function runQuiet(command: string, args: readonly string[], options: { cwd?: string } = {}): Promise<string> {
  const { stdout } = await run(command, args, { cwd: options.cwd, maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

/** CPU time (all threads) a process has used so far in user and in kernel mode, in ms (/proc/PID/stat, clock ticks of 10 ms). */
export async function cpuTimesOf(pid: number): Promise<{ user: number; system: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // After the command name (which may hold spaces and parentheses): utime and stime are fields 14 and 15 (man 5 proc).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/** CPU time (user + system, all threads) a process has used so far, in ms. */
export async function cpuMsOf(pid: number): Promise<number> {
  const { user, system } = await cpuTimesOf(pid);
  return user + system;
}
