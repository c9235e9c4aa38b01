/**
 * The service compiled and bundled, as `npm start` runs it (`node --enable-source-maps
 * dist/tollgate.mjs`), for benchmarks that measure its memory: under tsx the process also holds
 * the TypeScript compiler's work, which users never run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildBundledService } from '../../harness/build.js';
import { BUNDLE_PREFIX, bundleService } from '../../scripts/bundle.mjs';

const root = new URL('../..', import.meta.url).pathname;

/**
 * The service compiled and bundled into `outDir` (harness/build.ts); returns the bundle's entry,
 * tollgate.mjs. Type errors elsewhere in a working tree still emit JavaScript: they are printed.
 */
export async function buildService(outDir: string): Promise<string> {
  const [bundle] = await buildBundledService(outDir, { typeErrors: 'print' });
  return bundle!;
}

/**
 * The parts of the service a publishing bench drives without HTTP (configuration, context, the
 * packages table), bundled from tsc's output in `distDir` the way scripts/bundle.mjs bundles the
 * service, into `outDir`: the process then holds that code as the running service holds it.
 * Returns the bundle's entry, a module exporting `loadConfig`, `createContext`, `closeContext`
 * and `insertPackage`.
 */
export async function bundlePublishSide(distDir: string, outDir: string): Promise<string> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const entry = join(outDir, 'publish-side.js');
  const from = (path: string) => JSON.stringify(join(distDir, path));
  await writeFile(entry, [
    `export { loadConfig } from ${from('config.js')};`,
    `export { closeContext, createContext } from ${from('services/context.js')};`,
    `export { insertPackage } from ${from('adapters/db/packages.table.js')};`,
  ].join('\n'));
  const [bundle] = await bundleService([{ in: entry, out: `${BUNDLE_PREFIX}-publish-side` }], outDir);
  return bundle!;
}

/** The compiled service on 127.0.0.1:`port`, with the environment harness/service.ts gives tsx's. */
export function spawnCompiledService(main: string, dataDir: string, port: number, env: Record<string, string> = {}, stderr: 'pipe' | 'inherit' = 'pipe'): ChildProcess {
  // SERVICE_NODE_ARGS: as for harness/service.ts (`--cpu-prof --cpu-prof-dir=…` profiles the service under a bench).
  const nodeArgs = (process.env.SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // SERVICE_STDOUT: a file for the service's standard output (with `--trace-gc` in SERVICE_NODE_ARGS
  // and SERVICE_LOG_LEVEL=info, the collections show between the requests' log lines).
  const stdout = process.env.SERVICE_STDOUT ? openSync(process.env.SERVICE_STDOUT, 'a') : 'ignore';
  return spawn(process.execPath, [...nodeArgs, '--enable-source-maps', main], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', RATE_LIMITS: 'off', LOG_LEVEL: process.env.SERVICE_LOG_LEVEL ?? 'warn', ...env },
    stdio: ['ignore', stdout, stderr],
  });
}

/**
 * Stops a service (SIGTERM; SIGKILL if it is still there 20 s later) and waits until it has exited,
 * so that its folders can be removed or its database dropped behind it.
 */
export async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

/** Resident set size now (VmRSS) and its peak so far (VmHWM) of a process, in bytes. */
export async function rssOf(pid: number): Promise<{ rss: number; peak: number }> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}
