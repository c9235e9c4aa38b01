/**
 * bench/import: import from an upstream served on loopback, against the real service.
 *
 *   npx tsx bench/import.ts [--synthetic 60000] [--closure 300] [--tsx | --main path/to/main.js]
 *                           [--pg postgres://…] [--only resolve|fetch]
 *
 * `--pg`: the service on a throwaway PostgreSQL database of that server (dropped at the end).
 * `--only resolve`: steps 1-3; `--only fetch`: step 4 alone (quicker to repeat).
 * Beside wall times, the service's CPU time (user + system, from /proc) for the resolves and the
 * imports: on this shared machine it moves much less with the load average than the wall time.
 *
 * The service runs compiled, as `npm start` runs it (bench/lib/compiled-service.ts: built into
 * bench/.work/import/dist, started with `node --enable-source-maps main.js`).
 *
 * 1. Sync of a large signed APT index: the machine's Debian bookworm main `Packages` (APT lists)
 *    when present, else `--synthetic` generated paragraphs; gzip-compressed, Release signed by a
 *    throwaway gpg key (InRelease). Time, and the service's RSS before it and its peak RSS
 *    (VmHWM) after it.
 * 2. Unchanged re-sync (conditional InRelease request answered 304): median of 5.
 * 3. Resolve time of large closures (median of 3 over HTTP).
 * 4. Import of a `--closure`-package dependency chain (bench/lib/deb-corpus.ts) from a second
 *    loopback mirror with POST /import/fetch, against uploading the same files with POST /upload
 *    into another distribution that has the same mirror as a source (so both run the same
 *    pipeline, its dependency check against the synced catalogs included).
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { multipartBody } from '../harness/multipart.js';
import { freePort } from '../harness/net.js';
import { loginAsInitialAdmin, spawnService, waitUntilReady } from '../harness/service.js';
import { makeGpgKey, serveDir } from '../harness/upstream.js';
import { buildService, rssOf, spawnCompiledService } from './lib/compiled-service.js';
import { freshPostgres } from './lib/postgres.js';
import { debCorpus } from './lib/deb-corpus.js';
import { bigPackages, DEBIAN_RESOLVES, signedSuite } from './lib/import-upstream.js';
import { textTable } from './lib/table.js';
import { formatMiB, formatMs, median } from './lib/timing.js';
import { numberArg as arg, stringArg } from './lib/args.js';
import { cpuMsOf } from './lib/proc.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const work = join(root, 'bench', '.work', 'import');

const SYNTHETIC = arg('synthetic', 60_000);
const CLOSURE = arg('closure', 300);
/** `--tsx`: the service under tsx (harness/service.ts), as the figures before 2026-11-25 were taken. */
const UNDER_TSX = process.argv.includes('--tsx');
/** `--main PATH`: an already compiled main.js instead of building one (e.g. another revision's, to compare). */
const MAIN = stringArg('main');
const PG = stringArg('pg');
const ONLY = stringArg('only');


async function main(): Promise<void> {
  await rm(join(work, 'up'), { recursive: true, force: true });
  await mkdir(join(work, 'up'), { recursive: true });
  const gpg = await makeGpgKey(join(work, 'up', 'key'));
  const big = await bigPackages(SYNTHETIC, process.argv.includes('--synthetic'));
  const count = (big.text.toString('latin1').match(/^Package: /gm) ?? []).length;
  await signedSuite(join(work, 'up', 'big'), 'bookworm', big.text, gpg);
  const corpus = await debCorpus(join(root, 'bench', '.work', `import-corpus-${CLOSURE + 20}`), CLOSURE + 20, 0);
  const { stdout: small } = await run('apt-ftparchive', ['packages', 'pool'], { cwd: corpus.repoRoot, maxBuffer: 64 * 1024 * 1024 });
  const mirror = join(work, 'up', 'mirror');
  await mkdir(mirror, { recursive: true });
  await run('cp', ['-r', join(corpus.repoRoot, 'pool'), mirror]);
  await signedSuite(mirror, 'stable', Buffer.from(small), gpg);
  const upstream = await serveDir(join(work, 'up'));

  const dataDir = join(work, 'data');
  await rm(dataDir, { recursive: true, force: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const database = PG ? await freshPostgres(PG, 'tollgate_bench_import') : null;
  const env: Record<string, string> = { SIGNING_KEY_ALGORITHM: 'ed25519', ...(database ? { DATABASE_URL: database.url } : {}) };
  const server = UNDER_TSX ? spawnService(dataDir, port, env, 'inherit') : spawnCompiledService(MAIN ?? await buildService(join(work, 'dist')), dataDir, port, env, 'inherit');
  const rows: string[][] = [['measure', 'value']];
  const resolveRows: string[][] = [];
  try {
    await waitUntilReady(base);
    const token = await loginAsInitialAdmin(base, dataDir);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    const cpu = () => cpuMsOf(server.pid!);
    let started: number;
    if (ONLY !== 'fetch') {
      const source = await call('POST', '/import/sources', { name: 'big', type: 'apt', url: `${upstream.url}/big`, suite: 'bookworm', key: gpg.armoredPublic, distribution: 'bookworm' });
      const before = await rssOf(server.pid!);
      started = performance.now();
      const synced = await call('POST', `/import/sync/${String(source.id)}`);
      const syncMs = performance.now() - started;
      if (synced.status !== 'synced') throw new Error(`sync failed: ${JSON.stringify(synced)}`);
      const after = await rssOf(server.pid!);
      const resync: number[] = [];
      for (let i = 0; i < 5; i++) {
        started = performance.now();
        const again = await call('POST', `/import/sync/${String(source.id)}`);
        resync.push(performance.now() - started);
        if (again.status !== 'unchanged') throw new Error('re-sync was not unchanged');
      }
      const names = big.debian ? DEBIAN_RESOLVES : [`synth-${count - 1}`, `synth-${Math.floor(count / 2)}`, 'synth-100'];
      for (const name of names) {
        const times: number[] = [];
        const cpus: number[] = [];
        let total = 0;
        for (let i = 0; i < 3; i++) {
          const cpuBefore = await cpu();
          started = performance.now();
          const r = await call('GET', `/import/resolve/${name}?distribution=bookworm`);
          times.push(performance.now() - started);
          cpus.push((await cpu()) - cpuBefore);
          total = Number(r.total);
        }
        resolveRows.push([name, String(total), formatMs(times[0]!), formatMs(median(times)), formatMs(cpus[0]!), formatMs(median(cpus))]);
      }
      const afterResolves = await rssOf(server.pid!);
      rows.push(
        ['first sync (verify, download, parse, store)', formatMs(syncMs)],
        [`service (${UNDER_TSX ? 'under tsx' : 'compiled'}) RSS before the sync (peak so far)`, `${formatMiB(before.rss)} (${formatMiB(before.peak)})`],
        ['service peak RSS (VmHWM) after the sync', formatMiB(after.peak)],
        ['service RSS / peak after the resolves below', `${formatMiB(afterResolves.rss)} / ${formatMiB(afterResolves.peak)}`],
        ['unchanged re-sync (median of 5)', formatMs(median(resync))],
      );
    }

    if (ONLY !== 'resolve') {
      const mirrorSource = await call('POST', '/import/sources', { name: 'mirror', type: 'apt', url: `${upstream.url}/mirror`, suite: 'stable', key: gpg.armoredPublic, distribution: 'jammy' });
      await call('POST', `/import/sync/${String(mirrorSource.id)}`);
      // The same mirror for the distribution the uploads go to: a distribution with synced
      // catalogs checks missing dependencies against them (libc6 here, for every package), so
      // without it the upload would skip pipeline work the import does.
      const uploadSource = await call('POST', '/import/sources', { name: 'mirror-noble', type: 'apt', url: `${upstream.url}/mirror`, suite: 'stable', key: gpg.armoredPublic, distribution: 'noble' });
      await call('POST', `/import/sync/${String(uploadSource.id)}`);
      const top = corpus.entries[CLOSURE + 10]!.name;
      let cpuBefore = await cpu();
      started = performance.now();
      const imported = await call('POST', '/import/fetch', { name: top, distribution: 'jammy' });
      const importMs = performance.now() - started;
      const importCpu = (await cpu()) - cpuBefore;
      const importedPackages = (imported.packages as Array<{ status: string }>);
      const importedOk = importedPackages.filter((p) => p.status === 'published').length;
      const files = corpus.entries.slice(10, CLOSURE + 11).map((e) => join(corpus.repoRoot, e.poolPath));
      cpuBefore = await cpu();
      started = performance.now();
      let uploaded = 0;
      for (const file of files) {
        const form = await multipartBody({ distribution: 'noble' }, { path: file });
        const res = await fetch(`${base}/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...form.headers }, body: form.payload });
        if (res.status === 201) uploaded++;
      }
      const uploadMs = performance.now() - started;
      const uploadCpu = (await cpu()) - cpuBefore;
      rows.push(
        [`import of a ${importedPackages.length}-package closure (POST /import/fetch)`, `${formatMs(importMs)}, ${(importedOk / (importMs / 1000)).toFixed(1)} packages/s, ${importedOk} published; service CPU ${formatMs(importCpu)}`],
        [`upload of the same ${files.length} files (POST /upload, one client)`, `${formatMs(uploadMs)}, ${(uploaded / (uploadMs / 1000)).toFixed(1)} packages/s; service CPU ${formatMs(uploadCpu)}`],
      );
    }
    const atEnd = await rssOf(server.pid!);
    rows.push(['service RSS / peak at the end', `${formatMiB(atEnd.rss)} / ${formatMiB(atEnd.peak)}`]);

    console.log(`\nbench/import — ${new Date().toISOString().slice(0, 10)}, ${database ? 'PostgreSQL' : 'SQLite'}, ${big.what}: ${count} packages, Packages.gz ${formatMiB((await readFile(join(work, 'up', 'big', 'dists', 'bookworm', 'main', 'binary-amd64', 'Packages.gz'))).length)}\n`);
    console.log(textTable(rows));
    if (resolveRows.length) console.log(`\nresolve (GET /import/resolve; service CPU time beside the wall time)\n${textTable([['package', 'closure', 'first', 'median of 3', 'CPU first', 'CPU median'], ...resolveRows])}`);
  } finally {
    server.kill('SIGTERM');
    await upstream.close();
    await run('gpgconf', ['--homedir', gpg.home, '--kill', 'gpg-agent']).catch(() => undefined);
    if (database) {
      if (server.exitCode === null && server.signalCode === null) await new Promise((resolve) => server.once('exit', resolve));
      await database.drop();
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
