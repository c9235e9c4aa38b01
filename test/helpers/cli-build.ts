import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = new URL('../..', import.meta.url).pathname;

/**
 * The `tollgate` client compiled with tsc (cli/tsconfig.json) into a folder of this test
 * process's own: test files run side by side, and one writing cli/dist while another runs the
 * client from it made the other import half-written modules. The folder sits under cli/dist so
 * that the client's imports still resolve from cli/node_modules.
 */
export async function buildCli(): Promise<{ main: string; remove: () => Promise<void> }> {
  const outDir = join(root, 'cli', 'dist', `test-${process.pid}`);
  await promisify(execFile)(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'cli', 'tsconfig.json'), '--outDir', outDir]);
  return { main: join(outDir, 'main.js'), remove: () => rm(outDir, { recursive: true, force: true }) };
}
