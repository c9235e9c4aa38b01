import { spawn, type ChildProcess } from 'node:child_process';

export interface Daemon {
  child: ChildProcess;
  /** The last 20,000 characters the daemon printed (for failure messages). */
  output(): string;
  /** SIGTERM (SIGKILL after 5 s), wait for the exit, then the caller's clean-up. */
  stop(): Promise<void>;
}

export interface DaemonOptions {
  name: string;
  binary: string;
  args: string[];
  /** Answers true once the daemon serves. */
  ready: () => Promise<boolean>;
  timeoutMs: number;
  pollMs: number;
  /** Removes what the daemon was given (its temp folder), after it stopped. */
  cleanup: () => Promise<void>;
}

/**
 * Starts a real server process for a test (clamd, slapd) in the foreground and waits until it
 * answers; a daemon that exits or stays silent fails the start with its output.
 */
export async function startDaemon(o: DaemonOptions): Promise<Daemon> {
  const child = spawn(o.binary, o.args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (data: Buffer): void => {
    output = (output + data.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => {
    exited = true;
  });
  let spawnError: Error | null = null;
  child.once('error', (err) => {
    spawnError = err;
    exited = true;
  });

  const stop = async (): Promise<void> => {
    if (!exited) {
      child.kill('SIGCONT'); // in case a test left it stopped
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exitedPromise;
      clearTimeout(timer);
    }
    await o.cleanup();
  };

  const deadline = Date.now() + o.timeoutMs;
  while (!(await o.ready())) {
    if (exited || Date.now() > deadline) {
      await stop();
      const why = spawnError ? String(spawnError) : exited ? `${o.name} exited` : `${o.name} did not answer within ${o.timeoutMs / 1000} s`;
      throw new Error(`could not start ${o.name}: ${why}\n${output}`);
    }
    await new Promise((r) => setTimeout(r, o.pollMs));
  }
  return { child, output: () => output, stop };
}
