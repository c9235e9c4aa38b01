/**
 * RPM publishing benchmark (not part of the test suite): `npx tsx bench/rpm-publish.ts
 * [--packages N] [--runs R] [--no-createrepo]`.
 *
 * Packages: N real, distinct .rpm files built by the real rpmbuild (bench/lib/rpm-corpus.ts).
 * Cloning a few templates by rewriting their NAME tag would break the header digests and make
 * the createrepo_c comparison dishonest; one rpmbuild run per package would take ~15 minutes.
 * So each rpmbuild run writes a batch of 100 sub-packages, each with its own name, version,
 * release, arch (1 in 5 noarch), summary, description, dependencies and 3-27 files; the corpus is
 * cached in bench/.work/ (gitignored), ~8 minutes to build the first time on 2 cores.
 *
 * Tollgate, as the service does it:
 *  - upload-time work, reported apart: read each package (rpmHandler.inspect), hash it and
 *    compute its stored index entry (the repodata chunks as JSON, rpmHandler.indexEntry);
 *  - per run, in a new process (so its peak RSS is the publisher's alone): load the N stored
 *    entries, then a fresh RpmIndexWriter (as after a restart) does (a) full generation from the
 *    N entries and (b) add one package: N+1 entries → write. Both sign repomd.xml with a real
 *    Ed25519 key (OpenPgpSigner), write, fsync and rename the files, and prune generations.
 * createrepo_c, on a folder holding hard links to the same .rpm files: (a) `createrepo_c DIR`,
 * (b) one more .rpm linked in, `createrepo_c --update DIR`; once with its defaults (which also
 * write sqlite databases, which Tollgate does not) and once with `--no-database`.
 * Times are the median of R runs (default 3); peak RSS is the kernel's (ru_maxrss), worst run.
 * Node's own baseline (runtime, tsx, OpenPGP.js) is ~115 MiB of the Tollgate figure.
 */
import { createHash } from 'node:crypto';
import { link, mkdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { generateKeyInWorker } from '../src/adapters/signing/keygen.js';
import { OpenPgpSigner } from '../src/adapters/signing/openpgp-signer.js';
import { findDistribution, type Distribution } from '../src/domain/distributions.js';
import type { FileFacts } from '../src/domain/package.js';
import { rpmHandler } from '../src/services/formats/rpm.js';
import { rpmTreeRoot } from '../src/domain/repo/rpm/tree.js';
import { RpmIndexWriter } from '../src/adapters/storage/rpm-index-writer.js';
import { runPool } from './lib/pool.js';
import { runMeasured } from './lib/proc.js';
import { processPeakRss } from './lib/rss.js';
import { buildRpmCorpus } from './lib/rpm-corpus.js';
import { markdownTable, textTable } from './lib/table.js';
import { formatMiB, formatMs, median, timed } from './lib/timing.js';

const WORK = fileURLToPath(new URL('./.work/', import.meta.url));
const CORPUS_ROOT = join(WORK, 'rpm-corpus');

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} needs a positive integer`);
  return value;
}

function distribution(): Distribution {
  const dist = findDistribution('rocky9');
  if (!dist) throw new Error('rocky9 distribution missing');
  return dist;
}

/** What one publishing child process reports. */
interface PublishResult {
  fullMs: number;
  addOneMs: number;
  rssAfterLoadBytes: number;
  peakRssBytes: number;
  repoDir: string;
}

/** The stored entries the child publishes: what `packages.index_entry` holds. */
interface EntriesFile {
  entries: string[];
  extra: string;
}

/** Upload-time work for one package: inspect, hash, compute its stored index entry. */
async function indexEntryOf(path: string, dist: Distribution): Promise<string> {
  const pkg = await rpmHandler.inspect(path);
  const data = await readFile(path);
  const hex = (algo: string) => createHash(algo).update(data).digest('hex');
  const facts: FileFacts = { size: data.length, md5: hex('md5'), sha1: hex('sha1'), sha256: hex('sha256'), sha512: hex('sha512') };
  const fileTime = Math.floor((await stat(path)).mtimeMs / 1000);
  return rpmHandler.indexEntry(pkg, facts, rpmHandler.poolPath(pkg, dist, null), fileTime);
}

/**
 * Child process: load the stored entries, then with a fresh writer (as after a restart) publish
 * them all, then publish them plus one. The process's peak RSS is the publisher's.
 */
async function publishChild(entriesPath: string): Promise<void> {
  const { entries, extra } = JSON.parse(await readFile(entriesPath, 'utf8')) as EntriesFile;
  const key = await generateKeyInWorker({ name: 'Bench Signer', email: 'bench@example.invalid', type: 'ed25519', passphrase: 'bench' });
  const signer = await OpenPgpSigner.fromArmored(key.privateKeyArmored, 'bench');
  const dist = distribution();
  const withExtra = [...entries, extra];
  const rssAfterLoadBytes = process.memoryUsage.rss();
  const repoDir = join(WORK, 'rpm-publish-repo');
  await rm(repoDir, { recursive: true, force: true });
  const writer = new RpmIndexWriter(repoDir);
  const full = await timed(() => writer.write(dist, entries, signer));
  const addOne = await timed(() => writer.write(dist, withExtra, signer));
  const result: PublishResult = { fullMs: full.ms, addOneMs: addOne.ms, rssAfterLoadBytes, peakRssBytes: processPeakRss(), repoDir };
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

/** Runs {@link publishChild} in a new process. */
async function publishInChild(entriesPath: string): Promise<PublishResult> {
  const child = await runMeasured(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', entriesPath]);
  const line = child.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`publishing child printed no result:\n${child.stdout}\n${child.stderr}`);
  return JSON.parse(line.slice(7)) as PublishResult;
}

/** Number of `<package>` elements in the primary.xml.gz a repomd.xml points at. */
async function primaryPackageCount(repoRoot: string): Promise<number> {
  const repomd = await readFile(join(repoRoot, 'repodata', 'repomd.xml'), 'utf8');
  const href = /<data type="primary">[\s\S]*?<location href="([^"]+)"/.exec(repomd)?.[1];
  if (!href) throw new Error(`no primary in ${repoRoot}`);
  const xml = gunzipSync(await readFile(join(repoRoot, href))).toString('utf8');
  const listed = xml.split('<package type="rpm">').length - 1;
  const declared = Number(/packages="(\d+)"/.exec(xml)?.[1]);
  if (listed !== declared) throw new Error(`${repoRoot}: primary.xml declares ${declared} packages but lists ${listed}`);
  return listed;
}

/** createrepo_c full and --update runs on hard links to the corpus. */
async function createrepoRuns(paths: string[], extraPath: string, runs: number, extraArgs: string[]) {
  const dir = join(WORK, 'rpm-publish-createrepo');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await runPool(paths, 16, (p) => link(p, join(dir, basename(p))));
  const extraLink = join(dir, basename(extraPath));
  const full: number[] = [];
  const update: number[] = [];
  let peak = 0;
  for (let r = 0; r < runs; r++) {
    await rm(join(dir, 'repodata'), { recursive: true, force: true });
    await unlink(extraLink).catch(() => undefined);
    const a = await runMeasured('createrepo_c', ['--quiet', ...extraArgs, dir]);
    await link(extraPath, extraLink);
    const b = await runMeasured('createrepo_c', ['--quiet', '--update', ...extraArgs, dir]);
    full.push(a.ms);
    update.push(b.ms);
    peak = Math.max(peak, a.peakRssBytes, b.peakRssBytes);
  }
  const count = await primaryPackageCount(dir);
  return { fullMs: median(full), updateMs: median(update), peakRssBytes: peak, count };
}

async function main(): Promise<void> {
  const childAt = process.argv.indexOf('--child');
  if (childAt >= 0) return publishChild(process.argv[childAt + 1]!);
  const packages = option('--packages', 10_000);
  const runs = option('--runs', 3);
  const withCreaterepo = !process.argv.includes('--no-createrepo');
  const dist = distribution();
  await mkdir(WORK, { recursive: true });

  let t = performance.now();
  const paths = await buildRpmCorpus(CORPUS_ROOT, packages, {
    onProgress: (done, total) => done % 1000 === 0 && console.log(`  corpus: ${done}/${total} packages`),
  });
  const [extraPath] = await buildRpmCorpus(CORPUS_ROOT, 1, { prefix: 'bench-extra' });
  console.log(`corpus: ${packages} + 1 real rpms ready in ${formatMs(performance.now() - t)}`);

  t = performance.now();
  const entries = await runPool(paths, 4, (p) => indexEntryOf(p, dist));
  const extra = await indexEntryOf(extraPath!, dist);
  const uploadMs = performance.now() - t;
  const entriesPath = join(WORK, `rpm-publish-entries-${packages}.json`);
  await writeFile(entriesPath, JSON.stringify({ entries, extra } satisfies EntriesFile));
  const entryBytes = entries.reduce((s, e) => s + e.length, 0);
  console.log(`upload-time work (inspect, hash, chunks): ${formatMs(uploadMs)} (${(uploadMs / packages).toFixed(2)} ms/package), stored entries ${formatMiB(entryBytes)}`);

  const ours: PublishResult[] = [];
  for (let r = 0; r < runs; r++) ours.push(await publishInChild(entriesPath));
  const ourCount = await primaryPackageCount(join(ours[0]!.repoDir, rpmTreeRoot(dist)));
  const ourFull = median(ours.map((o) => o.fullMs));
  const ourAdd = median(ours.map((o) => o.addOneMs));
  const ourPeak = Math.max(...ours.map((o) => o.peakRssBytes));
  console.log(`tollgate runs: full ${ours.map((o) => formatMs(o.fullMs)).join(', ')}; add one ${ours.map((o) => formatMs(o.addOneMs)).join(', ')}; ${ourCount} packages listed`);
  console.log(`tollgate publisher RSS: ${formatMiB(median(ours.map((o) => o.rssAfterLoadBytes)))} after loading the stored entries, peak ${formatMiB(ourPeak)}`);

  const rows: string[][] = [['', 'Tollgate', 'createrepo_c', 'ratio', 'createrepo_c --no-database', 'ratio']];
  const ratio = (theirs: number, mine: number) => `${(theirs / mine).toFixed(1)}×`;
  if (!withCreaterepo) {
    rows.push([`full generation (${packages})`, formatMs(ourFull), '', '', '', '']);
    rows.push([`add one package (${packages + 1})`, formatMs(ourAdd), '', '', '', '']);
    rows.push(['peak RSS', formatMiB(ourPeak), '', '', '', '']);
    console.log(`\n${textTable(rows)}\n`);
    return;
  }
  const def = await createrepoRuns(paths, extraPath!, runs, []);
  const nodb = await createrepoRuns(paths, extraPath!, runs, ['--no-database']);
  console.log(`createrepo_c lists ${def.count} / ${nodb.count} packages`);
  rows.push([`full generation (${packages})`, formatMs(ourFull), formatMs(def.fullMs), ratio(def.fullMs, ourFull), formatMs(nodb.fullMs), ratio(nodb.fullMs, ourFull)]);
  rows.push([`add one package (${packages + 1})`, formatMs(ourAdd), formatMs(def.updateMs), ratio(def.updateMs, ourAdd), formatMs(nodb.updateMs), ratio(nodb.updateMs, ourAdd)]);
  rows.push(['peak RSS', formatMiB(ourPeak), formatMiB(def.peakRssBytes), ratio(def.peakRssBytes, ourPeak), formatMiB(nodb.peakRssBytes), ratio(nodb.peakRssBytes, ourPeak)]);
  console.log(`\n${textTable(rows)}\n\n${markdownTable(rows)}\n`);
  console.log(`upload-time chunk computation (not in the figures above): ${formatMs(uploadMs)} for ${packages} packages`);
  const met = ourAdd < def.updateMs && ourAdd < nodb.updateMs;
  console.log(`target (add one package faster than createrepo_c --update): ${met ? 'MET' : 'NOT MET'}`);
}

await main();
