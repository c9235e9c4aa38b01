/**
 * bench/cli-upload: what a person or a CI job gets from `tollgate upload <files…>`: the built
 * client run as its own process on the machine's APT cache (skipped when empty), once per
 * `--jobs` value, each into a fresh service (compiled and bundled as `npm start` runs it).
 *
 *   npx tsx bench/cli-upload.ts [--limit 400] [--jobs 1,4,8] [--main path/to/tollgate.mjs]
 *
 * The service answers an upload once the signed index lists it, so a client sending one file at
 * a time waits for each publish in turn; `--jobs` sends several and their publishes coalesce.
 * Prints MB/s, packages/s and the worst exit code per value, with `aptly repo add` + `publish
 * repo` on the same files (`--no-aptly` leaves it out).
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildCli, runCli } from '../harness/cli.js';
import { freePort } from '../harness/net.js';
import { loginAsInitialAdmin, waitUntilReady } from '../harness/service.js';
import { aptCacheCorpus } from './lib/apt-cache.js';
import { buildService, spawnCompiledService, stopped } from './lib/compiled-service.js';
import { numberArg, stringArg } from './lib/args.js';
import { runMeasured } from './lib/proc.js';
import { textTable } from './lib/table.js';
import { throwawayGpgHome } from './lib/gpg-home.js';

const root = new URL('..', import.meta.url).pathname;
const work = join(root, 'bench', '.work', 'cli-upload');
const LIMIT = numberArg('limit', 400);
const JOBS = (stringArg('jobs') ?? '1,4,8').split(',').map(Number);
const MB = 1e6;

async function main(): Promise<void> {
  const corpus = aptCacheCorpus(LIMIT);
  if (!corpus) return;
  const { files, bytes } = corpus;
  console.log(`${files.length} packages, ${(bytes / MB).toFixed(0)} MB, tollgate upload --jobs ${JOBS.join(', ')}`);
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const service = stringArg('main') ?? await buildService(join(work, 'dist'));
  const cli = await buildCli('bench');
  const rows: string[][] = [['client', 'time', 'throughput', 'exit code']];
  let oneAtATimeMs = 0;
  try {
    for (const jobs of JOBS) {
      const dataDir = join(work, `data-${jobs}`);
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const server = spawnCompiledService(service, dataDir, port, {}, 'inherit');
      try {
        await waitUntilReady(base);
        const token = await loginAsInitialAdmin(base, dataDir);
        // The signing key and the first (empty) indexes: made before the clock runs.
        await fetch(`${base}/settings/gpg`, { headers: { authorization: `Bearer ${token}` } });
        const started = performance.now();
        const { code, stderr } = await runCli(cli.main, ['upload', ...files, '--dist', 'bookworm', '--jobs', String(jobs)], { TOLLGATE_URL: base, TOLLGATE_TOKEN: token, XDG_CONFIG_HOME: join(work, 'config') });
        const ms = performance.now() - started;
        if (code !== 0) console.log(`tollgate upload --jobs ${jobs} exited ${code}: …${stderr.slice(-400)}`);
        if (jobs === 1) oneAtATimeMs = ms;
        rows.push([`tollgate upload --jobs ${jobs}`, `${(ms / 1000).toFixed(1)} s`, `${(bytes / MB / (ms / 1000)).toFixed(1)} MB/s, ${(files.length / (ms / 1000)).toFixed(1)} packages/s${oneAtATimeMs && jobs !== 1 ? ` (${(oneAtATimeMs / ms).toFixed(2)}x --jobs 1)` : ''}`, String(code)]);
      } finally {
        await stopped(server);
        await rm(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    await cli.remove();
  }
  if (!process.argv.includes('--no-aptly')) {
    const pool = join(work, 'files');
    await mkdir(pool, { recursive: true });
    for (const f of files) await promisify(execFile)('ln', ['-s', f, pool]);
    const { env, keyId } = await throwawayGpgHome(join(work, 'gnupg'));
    const config = join(work, 'aptly.conf');
    await writeFile(config, JSON.stringify({ rootDir: join(work, 'aptly'), architectures: ['amd64'], gpgProvider: 'gpg' }));
    const aptly = (args: string[]) => runMeasured('aptly', [`-config=${config}`, ...args], { env });
    await aptly(['repo', 'create', '-distribution=bookworm', '-component=main', 'bench']);
    const add = await aptly(['repo', 'add', 'bench', pool]);
    const publish = await aptly(['publish', 'repo', `-gpg-key=${keyId}`, '-architectures=amd64,all', 'bench']);
    const ms = add.ms + publish.ms;
    rows.push(['aptly repo add + publish repo', `${(ms / 1000).toFixed(1)} s`, `${(bytes / MB / (ms / 1000)).toFixed(1)} MB/s, ${(files.length / (ms / 1000)).toFixed(1)} packages/s`, '']);
  }
  console.log(textTable(rows));
  await rm(work, { recursive: true, force: true });
}

await main();
