/**
 * bench/apt-upload: the real service, uploads over HTTP.
 *
 *   npx tsx bench/apt-upload.ts [--packages 2000] [--clients 8] [--client http|fetch] [--no-aptly] [--tsx | --main path/to/tollgate.mjs]
 *
 * Starts Tollgate as `npm start` runs it (compiled and bundled, bench/lib/compiled-service.ts;
 * `--tsx`: the sources through tsx, as the figures before 2026-11-28 evening were taken; `--main`:
 * an already built bundle, e.g. another revision's) with RATE_LIMITS=off, its own DATA_DIR and
 * the default RSA-4096 key, uploads the corpus
 * (bench/lib/deb-corpus.ts) with N concurrent clients, then reports packages per second, how many
 * are missing from the signed index (Packages checked against the gpgv-verified InRelease), and
 * how long one more upload takes to appear in the signed index — side by side with
 * `aptly repo add` + `aptly publish update` of the same file on a repository of the same size
 * (`--no-aptly` leaves that out). The run's folders are removed when it ends (`--keep-data` leaves
 * them; bench/lib/fresh-dirs.ts: why the next run may wait a minute). BENCH_APT_OURS_DIR puts the
 * service's data directory elsewhere than bench/.work (an XFS mount, where copying an index
 * generation shares its extents).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { debCorpus } from './lib/deb-corpus.js';
import { cpuTimesOf, runMeasured } from './lib/proc.js';
import { textTable } from './lib/table.js';
import { formatMs, median, medianServerTiming, publishesOf, timeShares, type TimedUpload } from './lib/timing.js';
import { freePort } from '../harness/net.js';
import { loginAsInitialAdmin, spawnService, waitUntilReady } from '../harness/service.js';
import { throwawayGpgHome } from './lib/gpg-home.js';
import { clientKindArg, UploadClient } from './lib/upload-client.js';
import { numberArg as arg, stringArg } from './lib/args.js';
import { buildService, spawnCompiledService, stopped } from './lib/compiled-service.js';
import { freshDirs, removeRunDirs } from './lib/fresh-dirs.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const work = join(root, 'bench', '.work');

const COUNT = arg('packages', 2000);
const CLIENTS = arg('clients', 8);
const CLIENT = clientKindArg();
/** Extra uploads, one at a time after the burst: the median is the "one more upload" figure. */
const EXTRA = 5;
const UNDER_TSX = process.argv.includes('--tsx');
const MAIN = stringArg('main');


async function main(): Promise<void> {
  await mkdir(work, { recursive: true });
  const corpus = await debCorpus(join(work, `upload-corpus-${COUNT}`), COUNT, EXTRA);
  const dataDir = join(process.env.BENCH_APT_OURS_DIR ?? work, 'upload-data');
  const aptlyRoot = join(work, 'aptly-upload');
  await freshDirs(work, [dataDir, aptlyRoot]);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = UNDER_TSX
    ? spawnService(dataDir, port, {}, 'inherit')
    : spawnCompiledService(MAIN ?? await buildService(join(work, 'apt-upload-dist')), dataDir, port, {}, 'inherit');
  // Node's http with kept-alive connections (`--client fetch`: the clients before 2026-11-29, sixth session).
  const client = new UploadClient(base, CLIENTS, CLIENT);
  let failed = false;
  try {
    await waitUntilReady(base);
    const token = await loginAsInitialAdmin(base, dataDir);
    // The repository key and the first (empty) indexes: created at first start, before the clock runs.
    await fetch(`${base}/settings/gpg`, { headers: { authorization: `Bearer ${token}` } });

    /** The service's Server-Timing of the last upload: where its time went. */
    let lastTiming = '';
    /** Every upload of the burst: its time as the client saw it, and its Server-Timing. */
    const burst: TimedUpload[] = [];
    let inBurst = false;
    const upload = async (path: string) => {
      const sent = performance.now();
      const answer = await client.upload(path, { distribution: 'jammy' }, { authorization: `Bearer ${token}` });
      lastTiming = String(answer.headers['server-timing'] ?? '');
      if (inBurst) burst.push({ clientMs: performance.now() - sent, serverTiming: lastTiming });
      return answer.status === 201 && (JSON.parse(answer.body) as { status?: string }).status === 'published';
    };

    const files = corpus.entries.slice(0, COUNT).map((e) => join(corpus.repoRoot, e.poolPath));
    let next = 0;
    let failed = 0;
    const cpuBefore = await cpuTimesOf(server.pid!);
    const started = performance.now();
    inBurst = true;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < files.length) {
          const file = files[next++]!;
          if (!(await upload(file))) failed++;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    inBurst = false;
    const cpuAfter = await cpuTimesOf(server.pid!);
    const cpuUser = (cpuAfter.user - cpuBefore.user) / COUNT;
    const cpuSystem = (cpuAfter.system - cpuBefore.system) / COUNT;
    // How many publishes the uploads took, and how long one took (the service's own histogram).
    const metrics = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    const publishes = publishesOf(metrics);

    // Count what the signed index lists: InRelease must verify, Packages must match its hash.
    const keyring = join(work, 'upload-key.gpg');
    await writeFile(keyring, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
    const inRelease = await (await fetch(`${base}/repo/apt/dists/jammy/InRelease`)).text();
    await writeFile(join(work, 'InRelease'), inRelease);
    await run('gpgv', ['--keyring', keyring, join(work, 'InRelease')]);
    const packages = Buffer.from(await (await fetch(`${base}/repo/apt/dists/jammy/main/binary-amd64/Packages`)).arrayBuffer());
    const sha = createHash('sha256').update(packages).digest('hex');
    if (!new RegExp(`^ ${sha} +${packages.length} main/binary-amd64/Packages$`, 'm').test(inRelease)) throw new Error('Packages does not match the signed InRelease');
    const listed = new Set([...packages.toString().matchAll(/^Package: (.+)$/gm)].map((m) => m[1]));
    const missing = corpus.entries.slice(0, COUNT).filter((e) => !listed.has(e.name)).length;

    // One more upload into a service at rest: the .deb payloads of the burst, read behind it for
    // Contents, are done first (they publish too), then EXTRA uploads one at a time, the median.
    const pendingPayloads = async () => Number(/^tollgate_deb_payloads_pending (\S+)/m.exec(await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text())?.[1] ?? 0);
    // Complete: every payload read, and the served Contents (checked against the signed
    // InRelease) lists a file of every package of the burst.
    const contentsLists = async (): Promise<number> => {
      const release = await (await fetch(`${base}/repo/apt/dists/jammy/InRelease`)).text();
      const gz = Buffer.from(await (await fetch(`${base}/repo/apt/dists/jammy/main/Contents-amd64.gz`)).arrayBuffer());
      const digest = createHash('sha256').update(gz).digest('hex');
      if (!new RegExp(`^ ${digest} +${gz.length} main/Contents-amd64\\.gz$`, 'm').test(release)) return -1;
      // Each line: the path, then `[section/]name[,…]` of the packages holding it.
      const named = new Set([...gunzipSync(gz).toString().matchAll(/\s(\S+)$/gm)].flatMap((m) => m[1]!.split(',').map((p) => p.slice(p.lastIndexOf('/') + 1))));
      return corpus.entries.slice(0, COUNT).filter((e) => named.has(e.name)).length;
    };
    const restStart = performance.now();
    while ((await pendingPayloads()) > 0 || (await contentsLists()) < COUNT) {
      if (performance.now() - restStart > 600_000) throw new Error(`Contents incomplete after 600 s: ${await contentsLists()} of ${COUNT} packages listed`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const contentsCatchUp = (performance.now() - restStart) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const oneMsSamples: number[] = [];
    const timings: string[] = [];
    for (const extra of corpus.entries.slice(COUNT, COUNT + EXTRA)) {
      const oneStart = performance.now();
      const ok = await upload(join(corpus.extraRoot, extra.poolPath));
      oneMsSamples.push(performance.now() - oneStart);
      timings.push(lastTiming);
      const after = await (await fetch(`${base}/repo/apt/dists/jammy/main/binary-amd64/Packages`)).text();
      if (!ok || !after.includes(`Package: ${extra.name}\n`)) throw new Error('the extra package is not in the index after its 201');
      // Its own payload is read behind it: wait, so the next one meets a service at rest too.
      while ((await pendingPayloads()) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const oneMs = median(oneMsSamples);
    const extra = corpus.entries[COUNT]!;

    const results: string[][] = [
      ['metric', 'value'],
      ['packages uploaded', `${COUNT} by ${CLIENTS} concurrent clients (${CLIENT}), to the service ${UNDER_TSX ? 'under tsx' : 'compiled and bundled'}`],
      ['throughput', `${(COUNT / seconds).toFixed(1)} packages/s (${seconds.toFixed(1)} s)`],
      ['service CPU per upload during them (all threads: event loop, pool, payload reader)', `${(cpuUser + cpuSystem).toFixed(1)} ms (user ${cpuUser.toFixed(1)}, kernel ${cpuSystem.toFixed(1)})`],
      ['an upload during them, by the service (Server-Timing, median of each part)', medianServerTiming(burst.map((u) => u.serverTiming))],
      ["the clients' time during them, summed over the uploads", timeShares(burst)],
      ['index publishes during the uploads', publishes],
      ['uploads not answered 201 published', String(failed)],
      ['missing from the signed index', String(missing)],
      ['Contents complete after the burst (payloads read behind it, every package in the signed Contents)', `${contentsCatchUp.toFixed(1)} s`],
      [`one more upload until in the signed index (median of ${EXTRA}, at rest)`, `${formatMs(oneMs)} (${oneMsSamples.map((ms) => ms.toFixed(0)).join(', ')} ms)`],
      ['the same, by the service (Server-Timing, median of each part)', medianServerTiming(timings)],
    ];
    const targets = `targets: >= 250 packages/s: ${COUNT / seconds >= 250 ? 'met' : 'NOT met'}; none missing: ${missing === 0 ? 'met' : 'NOT met'}; one more upload <= 25 ms: ${oneMs <= 25 ? 'met' : 'NOT met'}`;
    if (process.argv.includes('--no-aptly')) {
      console.log(textTable(results));
      console.log(targets);
      return;
    }

    // aptly on a repository of the same packages: one more file, then publish update.
    const { env, keyId } = await throwawayGpgHome(join(work, 'gnupg-upload'));
    const config = join(work, 'aptly-upload.conf');
    await writeFile(config, JSON.stringify({ rootDir: aptlyRoot, architectures: ['amd64'], gpgProvider: 'gpg' }));
    const aptly = (args: string[]) => runMeasured('aptly', [`-config=${config}`, ...args], { env });
    await aptly(['repo', 'create', '-distribution=jammy', '-component=main', 'bench']);
    await aptly(['repo', 'add', 'bench', join(corpus.repoRoot, 'pool')]);
    await aptly(['publish', 'repo', `-gpg-key=${keyId}`, '-architectures=amd64', 'bench']);
    const add = await aptly(['repo', 'add', 'bench', join(corpus.extraRoot, extra.poolPath)]);
    const update = await aptly(['publish', 'update', `-gpg-key=${keyId}`, 'jammy']);
    const aptlyMs = add.ms + update.ms;

    console.log(textTable([
      ...results,
      ['aptly repo add + publish update, same file', formatMs(aptlyMs)],
      ['ratio aptly/tollgate', `${(aptlyMs / oneMs).toFixed(1)}x`],
    ]));
    // Issue #15's targets.
    console.log(`${targets}; >= 25x faster than aptly: ${aptlyMs / oneMs >= 25 ? 'met' : 'NOT met'}`);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    client.close();
    await stopped(server);
    // A failed run's data is left for a look; the next run removes it.
    if (!failed) await removeRunDirs(work, [dataDir, aptlyRoot]);
  }
}

await main();
