import { execFile, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = new URL('..', import.meta.url).pathname;

/**
 * The `tollgate` client compiled with tsc (cli/tsconfig.json) into a folder of this process's
 * own (`<tag>-<pid>`): test files run side by side, and one writing cli/dist while another runs the
 * client from it made the other import half-written modules. The folder sits under cli/dist so
 * that the client's imports still resolve from cli/node_modules.
 */
export async function buildCli(tag = 'test'): Promise<{ main: string; remove: () => Promise<void> }> {
  const outDir = join(root, 'cli', 'dist', `${tag}-${process.pid}`);
  await promisify(execFile)(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'cli', 'tsconfig.json'), '--outDir', outDir]);
  return { main: join(outDir, 'main.js'), remove: () => rm(outDir, { recursive: true, force: true }) };
}

/** How a run of the client ended. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built client (`main` from buildCli) as its own process. `env` adds to a clean
 * environment: nothing inherited that starts with TOLLGATE_, colours off.
 */
export function runCli(main: string, args: string[], env: Record<string, string>, input?: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TOLLGATE_')));
    const child = spawn(process.execPath, [main, ...args], { env: { ...base, NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}
