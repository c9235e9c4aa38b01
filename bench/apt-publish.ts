/**
 * bench/apt-publish: publishing an APT distribution at 10,000 and 50,000 packages.
 *
 *   npx tsx bench/apt-publish.ts [--packages 10000,50000] [--layouts 1x1,4x2] [--no-aptly]
 *
 * BENCH_APT_OURS_DIR puts our data directory elsewhere than bench/.work (e.g. an XFS mount, where
 * an append's copy of the previous index is a reflink).
 *
 * `--layouts`: besides one architecture and one component (1x1, against the peers), our publish
 * of the same packages spread over <architectures>x<components> indexes (ours only).
 *
 * For each size it measures, side by side on the same .deb files (bench/lib/deb-corpus.ts):
 *  - full index rebuild: Packages, .gz, .xz, Release, InRelease and Release.gpg, signed (ours and
 *    aptly's also Contents-<arch>.gz, from each package's file list; apt-ftparchive `packages`
 *    writes none);
 *  - publish after adding one package (median of five), signing and compression included: back to
 *    back, and (ours) five more into a repository at rest, once the previous publish's background
 *    work is done (its by-hash clean-up, and the spare copies the next append extends);
 *  - peak RSS.
 * Ours: the service's own publisher over its database (run in a child process on the compiled
 * build: bench/lib/apt-publish-ours.ts, itself compiled and run by plain `node`, so the process
 * holds what the service holds) with its default RSA-4096 key, fsync on.
 * apt-ftparchive: `packages` (cold, then with a warm --db cache for add-one), gzip -6, xz -0,
 * `release`, gpg clear-sign and detach-sign (RSA-4096). aptly: `publish repo` for the full
 * rebuild (after `repo add`, timed apart), `repo add` + `publish update` for add-one; `--no-aptly`
 * leaves it out (its `repo add` of 500,000 files alone takes longer than the rest of the run).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bundlePublishSide } from './lib/compiled-service.js';
import { debCorpus, type Corpus } from './lib/deb-corpus.js';
import { runMeasured, runQuiet } from './lib/proc.js';
import { textTable } from './lib/table.js';
import { formatMiB, formatMs, median } from './lib/timing.js';
import { throwawayGpgHome } from './lib/gpg-home.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const work = join(root, 'bench', '.work');
/** Extra packages: ours adds all of them (half back to back, half at rest), the peers the first half. */
const EXTRA = 10;
const PEER_ADDS = 5;

interface SideResult {
  fullMs: number;
  addOneMs: number;
  /** Ours: publish after adding one into a repository at rest (the previous publish's background work done). */
  addAtRestMs?: number;
  peakRssBytes: number;
  note?: string;
}

function sizesFromArgs(): number[] {
  const at = process.argv.indexOf('--packages');
  const list = at > 0 ? process.argv[at + 1]! : '10000,50000';
  return list.split(',').map((n) => Number(n.trim()));
}

function layoutsFromArgs(): string[] {
  const at = process.argv.indexOf('--layouts');
  return (at > 0 ? process.argv[at + 1]! : '1x1').split(',').map((l) => l.trim()).filter((l) => /^\d+x\d+$/.test(l));
}

async function ours(corpus: Corpus, count: number, layout = '1x1'): Promise<SideResult> {
  // BENCH_APT_OURS_DIR: where our data directory goes (a reflink filesystem's mount, say); bench/.work by default.
  const dataDir = join(process.env.BENCH_APT_OURS_DIR ?? work, `apt-ours-${count}-${layout}`);
  await rm(dataDir, { recursive: true, force: true });
  const { script, service } = await compiledPublishSide();
  const env = { ...process.env, BENCH_APT_LAYOUT: layout, TOLLGATE_PUBLISH_SIDE: service };
  await run(process.execPath, [script, 'load', dataDir, corpus.manifest, String(count)], { cwd: root, env, maxBuffer: 64 << 20 });
  const extras = join(work, `apt-extras-${count}.json`);
  await writeFile(extras, JSON.stringify(corpus.entries.slice(count, count + EXTRA)));
  const { stdout } = await run(process.execPath, [script, 'measure', dataDir, extras, String(count), String(EXTRA - PEER_ADDS)], { cwd: root, env, maxBuffer: 64 << 20 });
  const r = JSON.parse(stdout.trim().split('\n').pop()!) as { full: number[]; add: number[]; addAtRest: number[]; peakRssBytes: number; algorithm: string };
  const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join('/');
  return {
    fullMs: Math.min(...r.full), addOneMs: median(r.add), addAtRestMs: median(r.addAtRest), peakRssBytes: r.peakRssBytes,
    note: `${r.algorithm}; adds back to back ${list(r.add)} ms, at rest ${list(r.addAtRest)} ms`,
  };
}

/**
 * bench/lib/apt-publish-ours.ts compiled (once per run) into bench/.work/publish-side, so our side
 * runs under plain `node` as the service does, without the tsx loader's thread in its RSS; and the
 * service's part it drives, bundled from dist/ as `npm start` runs the service (bundlePublishSide).
 */
let publishSide: Promise<{ script: string; service: string }> | undefined;
function compiledPublishSide(): Promise<{ script: string; service: string }> {
  publishSide ??= (async () => {
    const out = join(work, 'publish-side');
    await rm(out, { recursive: true, force: true });
    await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'bench', 'tsconfig.publish-side.json')], { cwd: root, maxBuffer: 16 << 20 });
    const service = await bundlePublishSide(join(root, 'dist'), join(work, 'publish-side-service'));
    return { script: join(out, 'bench', 'lib', 'apt-publish-ours.js'), service };
  })();
  return publishSide;
}

const gpgHome = () => throwawayGpgHome(join(work, 'gnupg'));

/** apt-ftparchive's pipeline for one publish; `db` keeps its per-file cache between runs. */
async function ftparchivePublish(repoRoot: string, gpg: { env: NodeJS.ProcessEnv }, db: string | null): Promise<{ ms: number; rss: number }> {
  const dists = join(repoRoot, 'dists', 'jammy');
  const index = join(dists, 'main', 'binary-amd64');
  await mkdir(index, { recursive: true });
  const start = performance.now();
  // Straight into the file: at 500,000 packages its output (~510 MB) outgrows any pipe buffer we would hold.
  const packages = await runMeasured('sh', ['-c', `exec apt-ftparchive ${db ? `--db '${db}' ` : ''}packages pool > '${join(index, 'Packages')}'`], { cwd: repoRoot });
  await run('sh', ['-c', 'gzip -6 -k -f -n Packages && xz -0 -T0 -k -f Packages'], { cwd: index });
  const release = await runQuiet('apt-ftparchive', ['-o', 'APT::FTPArchive::Release::Codename=jammy', '-o', 'APT::FTPArchive::Release::Components=main', '-o', 'APT::FTPArchive::Release::Architectures=amd64', 'release', dists]);
  await writeFile(join(dists, 'Release'), release);
  await run('gpg', ['--batch', '--yes', '--clearsign', '-o', join(dists, 'InRelease'), join(dists, 'Release')], { env: gpg.env });
  await run('gpg', ['--batch', '--yes', '--detach-sign', '--armor', '-o', join(dists, 'Release.gpg'), join(dists, 'Release')], { env: gpg.env });
  return { ms: performance.now() - start, rss: packages.peakRssBytes };
}

async function ftparchive(corpus: Corpus, gpg: { env: NodeJS.ProcessEnv }): Promise<SideResult> {
  await rm(join(corpus.repoRoot, 'dists'), { recursive: true, force: true });
  const db = join(work, 'ftparchive-cache.db');
  await rm(db, { force: true });
  const full = await ftparchivePublish(corpus.repoRoot, gpg, null);
  await ftparchivePublish(corpus.repoRoot, gpg, db); // warms the cache
  const adds: number[] = [];
  let rss = full.rss;
  const added: string[] = [];
  for (const entry of corpus.entries.slice(-EXTRA, -EXTRA + PEER_ADDS)) {
    const target = join(corpus.repoRoot, entry.poolPath);
    await mkdir(join(target, '..'), { recursive: true });
    await copyFile(join(corpus.extraRoot, entry.poolPath), target);
    added.push(target);
    const r = await ftparchivePublish(corpus.repoRoot, gpg, db);
    adds.push(r.ms);
    rss = Math.max(rss, r.rss);
  }
  for (const path of added) await rm(path, { force: true });
  return { fullMs: full.ms, addOneMs: median(adds), peakRssBytes: rss, note: 'add-one with a warm --db cache' };
}

async function aptly(corpus: Corpus, gpg: { env: NodeJS.ProcessEnv; keyId: string }): Promise<SideResult & { importMs: number }> {
  const rootDir = join(work, 'aptly');
  await rm(rootDir, { recursive: true, force: true });
  const config = join(work, 'aptly.conf');
  await writeFile(config, JSON.stringify({ rootDir, architectures: ['amd64'], gpgProvider: 'gpg', downloadConcurrency: 1 }));
  const aptlyRun = (args: string[]) => runMeasured('aptly', [`-config=${config}`, ...args], { env: gpg.env });
  await aptlyRun(['repo', 'create', '-distribution=jammy', '-component=main', 'bench']);
  const imported = await aptlyRun(['repo', 'add', 'bench', join(corpus.repoRoot, 'pool')]);
  const full = await aptlyRun(['publish', 'repo', `-gpg-key=${gpg.keyId}`, '-architectures=amd64', 'bench']);
  const adds: number[] = [];
  let rss = Math.max(imported.peakRssBytes, full.peakRssBytes);
  for (const entry of corpus.entries.slice(-EXTRA, -EXTRA + PEER_ADDS)) {
    const add = await aptlyRun(['repo', 'add', 'bench', join(corpus.extraRoot, entry.poolPath)]);
    const update = await aptlyRun(['publish', 'update', `-gpg-key=${gpg.keyId}`, 'jammy']);
    adds.push(add.ms + update.ms);
    rss = Math.max(rss, add.peakRssBytes, update.peakRssBytes);
  }
  return { fullMs: full.ms, addOneMs: median(adds), peakRssBytes: rss, importMs: imported.ms, note: `repo add of the corpus took ${formatMs(imported.ms)} (not counted)` };
}

async function main(): Promise<void> {
  await mkdir(work, { recursive: true });
  // Our side runs the compiled service, as in production.
  await run('npm', ['run', '--silent', 'build'], { cwd: root });
  const gpg = await gpgHome();
  const rows: string[][] = [['packages', 'metric', 'tollgate', 'apt-ftparchive', 'aptly', 'ftparchive/tollgate', 'aptly/tollgate']];
  const notes: string[] = [];
  for (const count of sizesFromArgs()) {
    const started = performance.now();
    const corpus = await debCorpus(join(work, `apt-corpus-${count}`), count, EXTRA);
    console.error(`corpus of ${count} .deb files ready in ${formatMs(performance.now() - started)}`);
    const a = await ours(corpus, count);
    console.error(`tollgate done: ${JSON.stringify(a)}`);
    const b = await ftparchive(corpus, gpg);
    console.error(`apt-ftparchive done: ${JSON.stringify(b)}`);
    const c = process.argv.includes('--no-aptly') ? { fullMs: NaN, addOneMs: NaN, peakRssBytes: NaN, note: 'not run (--no-aptly)' } : await aptly(corpus, gpg);
    console.error(`aptly done: ${JSON.stringify(c)}`);
    // A side not run (--no-aptly) has NaN figures: shown as a dash.
    const ratio = (x: number, y: number) => (Number.isNaN(x) ? '–' : `${(x / y).toFixed(1)}x`);
    const ms = (x: number) => (Number.isNaN(x) ? '–' : formatMs(x));
    const mib = (x: number) => (Number.isNaN(x) ? '–' : formatMiB(x));
    rows.push([String(count), 'full rebuild', ms(a.fullMs), ms(b.fullMs), ms(c.fullMs), ratio(b.fullMs, a.fullMs), ratio(c.fullMs, a.fullMs)]);
    rows.push([String(count), 'publish after adding one', ms(a.addOneMs), ms(b.addOneMs), ms(c.addOneMs), ratio(b.addOneMs, a.addOneMs), ratio(c.addOneMs, a.addOneMs)]);
    rows.push([String(count), 'the same, into a repository at rest', ms(a.addAtRestMs!), '', '', ratio(b.addOneMs, a.addAtRestMs!), ratio(c.addOneMs, a.addAtRestMs!)]);
    rows.push([String(count), 'peak RSS', mib(a.peakRssBytes), mib(b.peakRssBytes), mib(c.peakRssBytes), '', '']);
    notes.push(`${count}: tollgate ${a.note}; apt-ftparchive ${b.note}; aptly ${c.note}`);
    for (const layout of layoutsFromArgs().filter((l) => l !== '1x1')) {
      const l = await ours(corpus, count, layout);
      console.error(`tollgate ${layout} done: ${JSON.stringify(l)}`);
      const [archs, comps] = layout.split('x');
      const what = `(${archs} architectures x ${comps} components)`;
      rows.push([String(count), `full rebuild ${what}`, formatMs(l.fullMs), '', '', '', '']);
      rows.push([String(count), `publish after adding one ${what}`, formatMs(l.addOneMs), '', '', '', '']);
      rows.push([String(count), `the same at rest ${what}`, formatMs(l.addAtRestMs!), '', '', '', '']);
      rows.push([String(count), `peak RSS ${what}`, formatMiB(l.peakRssBytes), '', '', '', '']);
      notes.push(`${count} ${layout}: tollgate ${l.note}`);
    }
    if (count === 500_000) {
      notes.push(`targets at 500,000 (issue #15): add-one < 200 ms: back to back ${a.addOneMs < 200 ? 'met' : 'NOT met'}, at rest ${a.addAtRestMs! < 200 ? 'met' : 'NOT met'}; full rebuild faster than apt-ftparchive: ${a.fullMs < b.fullMs ? 'met' : 'NOT met'}; peak RSS < 300 MB: ${a.peakRssBytes < 300e6 ? 'met' : 'NOT met'}`);
    }
    if (count === 50_000) {
      notes.push(`targets at 50,000: add-one < 300 ms: ${a.addOneMs < 300 ? 'met' : 'NOT met'}; full rebuild faster than apt-ftparchive: ${a.fullMs < b.fullMs ? 'met' : 'NOT met'}; peak RSS < 300 MB: ${a.peakRssBytes < 300e6 ? 'met' : 'NOT met'}; issue #15's peak RSS < 150 MB: ${a.peakRssBytes < 150e6 ? 'met' : 'NOT met'}`);
    }
  }
  console.log(textTable(rows));
  for (const n of notes) console.log(n);
}

await main();
