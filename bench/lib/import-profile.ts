/**
 * Profiling aid for the import catalog (not a benchmark): builds the service context in this
 * process as test/helpers/app.ts does, syncs the bench/import.ts upstream once, then times
 * resolves in process (no HTTP) and, with --phases, where each one spends its time.
 *
 *   npx tsx bench/lib/import-profile.ts [--pg postgres://…] [--reps 5] [--sync-only] [names…]
 *   npx tsx bench/lib/import-profile.ts --profile resolve.cpuprofile   (CPU profile of the resolves only)
 *   npx tsx bench/lib/import-profile.ts --sync-only --heap-profile sync.heapprofile [--minor]
 *   npx tsx bench/lib/import-profile.ts --resolve-heap-profile resolve.heapprofile   (every allocation of the resolves)
 *   node --cpu-prof --cpu-prof-dir bench/.work/prof --import tsx bench/lib/import-profile.ts --sync-only
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshPostgres } from './postgres.js';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { closeContext, createContext } from '../../src/services/context.js';
import { makeGpgKey, serveDir } from '../../harness/upstream.js';
import { bigPackages, DEBIAN_RESOLVES, signedSuite } from './import-upstream.js';
import { formatMiB, formatMs, median } from './timing.js';

const root = new URL('../..', import.meta.url).pathname;
const work = join(root, 'bench', '.work', 'import-profile');
const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = argv.indexOf(`--${name}`);
  if (at < 0) return undefined;
  const value = argv[at + 1];
  argv.splice(at, 2);
  return value;
};
const flag = (name: string): boolean => {
  const at = argv.indexOf(`--${name}`);
  if (at >= 0) argv.splice(at, 1);
  return at >= 0;
};

async function main(): Promise<void> {
  const pgUrl = option('pg');
  const reps = Number(option('reps') ?? 5);
  const syncOnly = flag('sync-only');
  const profileTo = option('profile');
  const heapProfileTo = option('heap-profile');
  const resolveHeapProfileTo = option('resolve-heap-profile');
  const names = argv.length ? argv : DEBIAN_RESOLVES;

  await rm(work, { recursive: true, force: true });
  await mkdir(join(work, 'up'), { recursive: true });
  const gpg = await makeGpgKey(join(work, 'up', 'key'));
  const big = await bigPackages(60_000, false);
  await signedSuite(join(work, 'up', 'big'), 'bookworm', big.text, gpg);
  const upstream = await serveDir(join(work, 'up'));

  let dropDb = async () => undefined as void;
  let databaseUrl: string | undefined;
  if (pgUrl) {
    const db = await freshPostgres(pgUrl, 'tollgate_profile');
    databaseUrl = db.url;
    if (flag('keep-db')) console.log(`database ${new URL(db.url).pathname.slice(1)} is kept`);
    else dropDb = db.drop;
  }
  const dataDir = join(work, 'data');
  await mkdir(dataDir, { recursive: true });
  const config = loadConfig({ ENV: 'test', DATA_DIR: dataDir, BCRYPT_ROUNDS: '4', RATE_LIMITS: 'off', SIGNING_KEY_ALGORITHM: 'ed25519', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  const ctx = await createContext(config, pino({ level: 'warn' }));
  try {
    const actor = { username: 'admin', ip: null };
    const source = await ctx.imports.sources.create({ name: 'big', type: 'apt', url: `${upstream.url}/big`, suite: 'bookworm', key: gpg.armoredPublic, distribution: 'bookworm' }, actor);
    global.gc?.();
    const rssBefore = process.memoryUsage.rss();
    if (global.gc) console.log(`heap used before the sync (after a full GC): ${formatMiB(process.memoryUsage().heapUsed)}`);
    let heapPeak = 0;
    const sampler = setInterval(() => { heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed); }, 20);
    // --heap-profile FILE: sampled allocations of the sync that outlived young-generation GCs (then
    // died in a major GC, or are still alive): what makes the old generation grow.
    const heapSession = heapProfileTo ? new Session() : null;
    if (heapSession) {
      heapSession.connect();
      await heapSession.post('HeapProfiler.enable');
      await heapSession.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: flag('minor') } as never);
    }
    let started = performance.now();
    const result = await ctx.imports.syncs.sync(source.id, 'admin');
    const syncMs = performance.now() - started;
    if (heapSession) {
      const { profile } = await heapSession.post('HeapProfiler.stopSampling');
      await writeFile(heapProfileTo!, JSON.stringify(profile));
      heapSession.disconnect();
    }
    clearInterval(sampler);
    if (result.status !== 'synced') throw new Error(`sync failed: ${JSON.stringify(result)}`);
    console.log(`sync of ${result.count} packages: ${formatMs(syncMs)}; RSS before ${formatMiB(rssBefore)}, peak (VmHWM) ${formatMiB(process.resourceUsage().maxRSS * 1024)}, heap used peak (sampled) ${formatMiB(heapPeak)}`);
    if (syncOnly) return;
    if (flag('gc-after-sync')) global.gc?.();
    // --profile FILE: a CPU profile of the resolves only (the sync is left out).
    const session = profileTo ? new Session() : null;
    // --resolve-heap-profile FILE: every sampled allocation of the resolves.
    const resolveHeap = resolveHeapProfileTo ? new Session() : null;
    if (global.gc) {
      global.gc();
      console.log(`heap used after the resolves (after a full GC): ${formatMiB(process.memoryUsage().heapUsed)}`);
    }
    if (resolveHeap) {
      resolveHeap.connect();
      await resolveHeap.post('HeapProfiler.enable');
      await resolveHeap.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
    }
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 100 });
      await session.post('Profiler.start');
    }
    for (const name of names) {
      const times: number[] = [];
      const cpu: number[] = [];
      let total = 0;
      for (let i = 0; i < reps; i++) {
        started = performance.now();
        const cpuStarted = process.cpuUsage();
        const r = await ctx.imports.catalog.resolve(name, { distribution: 'bookworm' });
        times.push(performance.now() - started);
        const used = process.cpuUsage(cpuStarted);
        cpu.push((used.user + used.system) / 1000);
        total = r.closure.selected.length;
      }
      console.log(`${name.padEnd(16)} ${String(total).padStart(5)}  first ${formatMs(times[0]!).padStart(6)}  median ${formatMs(median(times)).padStart(6)}  min ${formatMs(Math.min(...times)).padStart(6)}  CPU median ${formatMs(median(cpu))}`);
    }
    if (resolveHeap) {
      const { profile } = await resolveHeap.post('HeapProfiler.stopSampling');
      await writeFile(resolveHeapProfileTo!, JSON.stringify(profile));
      resolveHeap.disconnect();
    }
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(profileTo!, JSON.stringify(profile));
      session.disconnect();
    }
  } finally {
    await closeContext(ctx);
    await dropDb();
    await upstream.close();
    await promisify(execFile)('gpgconf', ['--homedir', gpg.home, '--kill', 'gpg-agent']).catch(() => undefined);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
