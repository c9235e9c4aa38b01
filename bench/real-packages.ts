/**
 * bench/real-packages: real Debian packages from the machine's APT cache, uploaded over HTTP.
 *
 *   npx tsx bench/real-packages.ts [--clients 4] [--limit N] [--client http|fetch|curl] [--no-peers] [--main path/to/tollgate.mjs]
 *
 * Starts the compiled service (as `npm start` runs it; RATE_LIMITS=off, its own DATA_DIR, no
 * clamd), uploads every amd64/all .deb of /var/cache/apt/archives with N concurrent clients
 * (each file streamed from disk), and reports MB/s, packages/s, the service's CPU time (all its
 * threads), its peak RSS, how fast a GET /health/live is answered meanwhile, and where the
 * clients' time went (each Server-Timing part summed over the uploads, and the rest). The clients
 * share the machine's cores with the service: `--client http` (the default) sends from this
 * process over node:http (bench/lib/upload-client.ts), `--client fetch` with Node's fetch and
 * FormData (the figures before 2026-11-29, sixth session), `--client curl` runs one `curl -F` per
 * upload, as a shell script would. Then
 * checks that every stanza of the published Packages is byte for byte what `apt-ftparchive
 * packages` writes for the same files, and, side by side, how fast the peers take in the same
 * files: `apt-ftparchive packages` (reads and hashes each file) and `aptly repo add` + `publish`.
 * Skips, saying so, when the cache holds no package. The run's folders are removed when it ends
 * (`--keep-data` leaves them; bench/lib/fresh-dirs.ts: why the next run may wait a minute).
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../harness/net.js';
import { loginAsInitialAdmin, waitUntilReady } from '../harness/service.js';
import { aptCacheCorpus } from './lib/apt-cache.js';
import { buildService, rssOf, spawnCompiledService, stopped } from './lib/compiled-service.js';
import { freshDirs, removeRunDirs } from './lib/fresh-dirs.js';
import { numberArg, stringArg } from './lib/args.js';
import { cpuMsOf, runMeasured } from './lib/proc.js';
import { medianServerTiming, publishesOf, quantile, timeShares, type TimedUpload } from './lib/timing.js';
import { textTable } from './lib/table.js';
import { throwawayGpgHome } from './lib/gpg-home.js';
import { UploadClient } from './lib/upload-client.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const work = join(root, 'bench', '.work');

const CLIENTS = numberArg('clients', 4);
const LIMIT = numberArg('limit', Number.POSITIVE_INFINITY);
const PEERS = !process.argv.includes('--no-peers');
const CLIENT = stringArg('client') ?? 'http';
if (CLIENT !== 'http' && CLIENT !== 'fetch' && CLIENT !== 'curl') throw new Error(`--client http|fetch|curl, not ${CLIENT}`);

const MB = 1e6;
const mbps = (bytes: number, ms: number) => `${(bytes / MB / (ms / 1000)).toFixed(1)} MB/s`;

/** Stanzas of a Packages file keyed by `name version arch`, Filename reduced to the file's name (the pool layouts differ). */
function stanzas(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const stanza of text.split(/\n\n+/).filter((s) => s.trim())) {
    const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(stanza)?.[1];
    const normalised = stanza.trimEnd().replace(/^Filename: (.*)$/m, (_, path: string) => `Filename: ${basename(path)}`);
    map.set(`${field('Package')} ${field('Version')} ${field('Architecture')}`, `${normalised}\n`);
  }
  return map;
}

async function main(): Promise<void> {
  const corpus = aptCacheCorpus(LIMIT);
  if (!corpus) return;
  const { files, bytes } = corpus;
  console.log(`${files.length} packages, ${(bytes / MB).toFixed(0)} MB, ${CLIENTS} clients (${CLIENT})`);

  await mkdir(work, { recursive: true });
  // --main: an already built bundle (another revision's, for a comparison).
  const main = stringArg('main') ?? await buildService(join(work, 'real-packages', 'dist'));
  const dataDir = join(work, 'real-packages', 'data');
  const ftpDir = join(work, 'real-packages', 'ftparchive');
  const aptlyRoot = join(work, 'aptly-real');
  const runDirs = [dataDir, ftpDir, aptlyRoot];
  await freshDirs(work, runDirs);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnCompiledService(main, dataDir, port, {}, 'inherit');
  let oursMs = 0;
  let serviceCpuMs = 0;
  const probeMs: number[] = [];
  const uploads: TimedUpload[] = [];
  let publishes = '';
  let catchUpMs = 0;
  let peak = 0;
  const failures: string[] = [];
  const client = new UploadClient(base, CLIENTS, CLIENT === 'fetch' ? 'fetch' : 'http');
  try {
    await waitUntilReady(base);
    const token = await loginAsInitialAdmin(base, dataDir);
    // The repository key and the first (empty) indexes: made before the clock runs.
    await fetch(`${base}/settings/gpg`, { headers: { authorization: `Bearer ${token}` } });
    const check = (path: string, status: number, body: { status?: string; detail?: string }) => {
      if (status !== 201 || body.status !== 'published') failures.push(`${basename(path)}: ${status} ${body.status ?? body.detail}`);
    };
    const uploadFromHere = async (path: string) => {
      const sent = performance.now();
      const answer = await client.upload(path, { distribution: 'bookworm' }, { authorization: `Bearer ${token}` }, true);
      uploads.push({ clientMs: performance.now() - sent, serverTiming: String(answer.headers['server-timing'] ?? '') });
      check(path, answer.status, JSON.parse(answer.body) as { status?: string; detail?: string });
    };
    const uploadWithCurl = async (path: string) => {
      // `Expect:` off: curl would otherwise wait for a 100 Continue before sending a large body.
      const { stdout } = await run('curl', ['-sS', '-o', '-', '-w', '\n%{http_code}', '-H', 'Expect:', '-H', `authorization: Bearer ${token}`,
        '-F', 'distribution=bookworm', '-F', `file=@${path}`, `${base}/upload`], { maxBuffer: 16 << 20 });
      const cut = stdout.lastIndexOf('\n');
      check(path, Number(stdout.slice(cut + 1)), JSON.parse(stdout.slice(0, cut)) as { status?: string; detail?: string });
    };
    const upload = CLIENT === 'curl' ? uploadWithCurl : uploadFromHere;
    let next = 0;
    let uploading = true;
    // How the API answers others meanwhile: GET /health/live every 50 ms while the uploads run.
    const probe = (async () => {
      while (uploading) {
        const t = performance.now();
        await (await fetch(`${base}/health/live`)).arrayBuffer();
        probeMs.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const cpuBefore = await cpuMsOf(server.pid!);
    const started = performance.now();
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (next < files.length) await upload(files[next++]!);
    }));
    oursMs = performance.now() - started;
    uploading = false;
    await probe;
    serviceCpuMs = (await cpuMsOf(server.pid!)) - cpuBefore;
    publishes = publishesOf(await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text());
    // The payloads (file lists for Contents) are read behind the uploads: how long until done.
    const pending = async () => Number(/^tollgate_deb_payloads_pending (\d+)/m.exec(await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text())?.[1] ?? NaN);
    const atEnd = await pending();
    while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 100));
    catchUpMs = performance.now() - started - oursMs;
    console.log(`payloads still to read when the last upload was answered: ${atEnd}; all read ${(catchUpMs / 1000).toFixed(1)} s later`);
    peak = (await rssOf(server.pid!)).peak;

    // Every stanza as apt-ftparchive writes it for the same files (Filename aside: the pools differ).
    const reference = await run('apt-ftparchive', ['packages', '.'], { cwd: join(dataDir, 'repo', 'apt', 'pool'), maxBuffer: 1 << 30 });
    const theirs = stanzas(reference.stdout);
    const ours = stanzas(await readFile(join(dataDir, 'repo', 'apt', 'dists', 'bookworm', 'main', 'binary-amd64', 'Packages'), 'utf8'));
    let differing = 0;
    for (const [key, stanza] of ours) {
      if (theirs.get(key) !== stanza) {
        if (differing++ < 3) console.log(`differs from apt-ftparchive: ${key}\n--- ours\n${stanza}--- apt-ftparchive\n${theirs.get(key) ?? '(absent)'}`);
      }
    }
    console.log(textTable([
      ['metric', 'Tollgate'],
      ['uploaded', `${files.length - failures.length} of ${files.length} (${(bytes / MB).toFixed(0)} MB) in ${(oursMs / 1000).toFixed(1)} s`],
      ['throughput', `${mbps(bytes, oursMs)}, ${(files.length / (oursMs / 1000)).toFixed(1)} packages/s`],
      ['GET /health/live meanwhile: median, p99, max', [0.5, 0.99, 1].map((q) => `${quantile(probeMs, q).toFixed(1)} ms`).join(', ')],
      ['an upload, by the service (Server-Timing, median of each part)', uploads.length ? medianServerTiming(uploads.map((u) => u.serverTiming)) : 'not measured with curl'],
      ["the clients' time, summed over the uploads (weighs large packages as MB/s does)", uploads.length ? timeShares(uploads) : 'not measured with curl'],
      ['index publishes during the uploads', publishes],
      ['service CPU (all threads) while uploading', `${(serviceCpuMs / 1000).toFixed(1)} s, ${(serviceCpuMs / (bytes / 1e9) / 1000).toFixed(1)} s per GB`],
      ['Contents complete (every payload read)', `${((oursMs + catchUpMs) / 1000).toFixed(1)} s after the first upload, ${mbps(bytes, oursMs + catchUpMs)}`],
      ['service peak RSS', `${(peak / 2 ** 20).toFixed(0)} MiB`],
      ['stanzas in Packages', String(ours.size)],
      ['stanzas differing from apt-ftparchive packages', String(differing + [...theirs.keys()].filter((k) => !ours.has(k)).length)],
    ]));
    for (const f of failures.slice(0, 10)) console.log(`not published: ${f}`);
  } finally {
    client.close();
    await stopped(server);
  }
  if (!PEERS) {
    await removeRunDirs(work, runDirs);
    return;
  }

  // The peers on the same files: apt-ftparchive indexing them, aptly taking them into a repository and publishing it.
  await mkdir(ftpDir, { recursive: true });
  for (const f of files) await run('ln', ['-s', f, join(ftpDir, basename(f))]);
  const ftp = await runMeasured('apt-ftparchive', ['packages', '.'], { cwd: ftpDir });

  const { env, keyId } = await throwawayGpgHome(join(work, 'gnupg-real'));
  const config = join(work, 'aptly-real.conf');
  await writeFile(config, JSON.stringify({ rootDir: aptlyRoot, architectures: ['amd64'], gpgProvider: 'gpg' }));
  const aptly = (args: string[]) => runMeasured('aptly', [`-config=${config}`, ...args], { env });
  await aptly(['repo', 'create', '-distribution=bookworm', '-component=main', 'bench']);
  const add = await aptly(['repo', 'add', 'bench', ftpDir]);
  const publish = await aptly(['publish', 'repo', `-gpg-key=${keyId}`, '-architectures=amd64,all', 'bench']);

  console.log(textTable([
    ['same files', 'time', 'throughput', 'peer / Tollgate'],
    ['Tollgate: uploads over HTTP, published and signed', `${(oursMs / 1000).toFixed(1)} s`, mbps(bytes, oursMs), ''],
    ['apt-ftparchive packages (index only)', `${(ftp.ms / 1000).toFixed(1)} s`, mbps(bytes, ftp.ms), `${(ftp.ms / oursMs).toFixed(2)}x`],
    ['aptly repo add + publish repo', `${((add.ms + publish.ms) / 1000).toFixed(1)} s`, mbps(bytes, add.ms + publish.ms), `${((add.ms + publish.ms) / oursMs).toFixed(2)}x`],
  ]));
  await removeRunDirs(work, runDirs);
}

await main();
