/**
 * The service compiled and bundled as `npm run build` makes it (tsconfig.build.json, then
 * scripts/bundle.mjs), into a folder of the caller's (not dist/, which others working in the
 * checkout may be building at the same time). The bundle test runs it to catch what the bundler
 * breaks; the benchmarks, to measure what users run.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BUNDLE_PREFIX, bundleService } from '../scripts/bundle.mjs';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

/**
 * Compiles and bundles src/ into `outDir`; returns the bundle's files, its entry (tollgate.mjs)
 * first. `typeErrors: 'print'` (benchmarks of a working tree): tsc still emits JavaScript, and its
 * errors are printed; 'fail' (the bundle test): they fail the build.
 */
export async function buildBundledService(outDir: string, options: { typeErrors: 'fail' | 'print' }): Promise<string[]> {
  await rm(outDir, { recursive: true, force: true });
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const compiled = run(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', outDir], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  if (options.typeErrors === 'fail') await compiled;
  else await compiled.catch((error: { stdout?: string }) => console.error(`tsc reported errors (JavaScript emitted anyway):\n${error.stdout ?? String(error)}`));
  const main = join(outDir, 'main.js');
  if (!existsSync(main)) throw new Error(`the build produced no ${main}`);
  return bundleService([{ in: main, out: BUNDLE_PREFIX }], outDir);
}
