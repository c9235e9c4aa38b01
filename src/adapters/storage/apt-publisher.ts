/**
 * Publish one APT distribution to disk so that a client never sees a half-published state:
 *   1. build Packages, compress to .gz and .xz, hash every variant (in memory, concurrently);
 *   2. write the `by-hash/` copies (content-addressed, so a client holding an older InRelease
 *      still finds the files it names);
 *   3. replace Packages, Packages.gz, Packages.xz;
 *   4. sign, then replace Release, Release.gpg and InRelease last.
 * Each file is replaced by an atomic rename. By-hash files of the last few generations are kept,
 * and none is deleted before it is `byHashMinAgeSeconds` old, so clients mid-update do not get
 * "Hash Sum mismatch".
 */
import { link, mkdir, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { DomainError } from '../../domain/errors.js';
import { releaseDate, releaseFile, type ReleaseFileEntry } from '../../domain/repo/apt/release.js';
import { packagesIndex } from '../../domain/repo/apt/stanza.js';
import type { Signer } from '../signing/signer.js';
import { fsyncDir, isErrno, tempPathFor, writeFileAtomic } from './atomic.js';
import { hashBytes, type ContentDigests } from './hash-stream.js';
import { compressXz, type XzOptions } from './xz.js';

const gzipAsync = promisify(gzip);

/** What to publish, and how. */
export interface AptPublishOptions {
  /** The APT root that holds `dists/` and `pool/`, e.g. `<DATA_DIR>/repo/apt`. */
  repoRoot: string;
  codename: string;
  /** Package stanzas in their final, deterministic order (see `packageStanza`). */
  stanzas: readonly string[];
  signer: Signer;
  origin: string;
  label: string;
  /** Default: the codename. */
  suite?: string;
  description?: string;
  /** Default `main`. */
  component?: string;
  /** Default `amd64` (`all` packages are listed there too). */
  architecture?: string;
  /** Release date; default SOURCE_DATE_EPOCH if set, else now. */
  date?: Date;
  /** Adds `Valid-Until: date + validForSeconds`. */
  validForSeconds?: number | null;
  /** By-hash generations kept besides the current one (default 3). */
  keepGenerations?: number;
  /** By-hash files younger than this are never deleted (default 600 s). */
  byHashMinAgeSeconds?: number;
  gzipLevel?: number;
  xz?: XzOptions;
  /** fsync written files (default true; tests may turn it off). */
  sync?: boolean;
}

/** What was published, with timings (ms) for monitoring. */
export interface AptPublishResult {
  release: string;
  files: ReleaseFileEntry[];
  timings: { build: number; compress: number; sign: number; write: number; total: number };
}

const BY_HASH_DIRS = [
  ['MD5Sum', 'md5'],
  ['SHA1', 'sha1'],
  ['SHA256', 'sha256'],
  ['SHA512', 'sha512'],
] as const;
const NAME = /^[a-z0-9][a-z0-9.+-]*$/;
const GENERATIONS_FILE = '.generations.json';

/** Publishes of the same distribution in this process run one after the other. */
const running = new Map<string, Promise<unknown>>();

/** Build, sign and atomically publish `dists/<codename>/` for one component and architecture. */
export function publishAptDistribution(options: AptPublishOptions): Promise<AptPublishResult> {
  const key = join(options.repoRoot, 'dists', options.codename);
  const previous = running.get(key) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => publish(options));
  const tracked = next.catch(() => undefined);
  running.set(key, tracked);
  void tracked.then(() => { if (running.get(key) === tracked) running.delete(key); });
  return next;
}

async function publish(o: AptPublishOptions): Promise<AptPublishResult> {
  const component = o.component ?? 'main';
  const arch = o.architecture ?? 'amd64';
  for (const [what, value] of [['codename', o.codename], ['component', component], ['architecture', arch]] as const) {
    if (!NAME.test(value)) throw new DomainError('invalid', 'bad_distribution', `invalid ${what} ${JSON.stringify(value)}`);
  }
  const writeOpts = { noSync: o.sync === false };
  const t0 = performance.now();
  const distDir = join(o.repoRoot, 'dists', o.codename);
  const indexRel = `${component}/binary-${arch}`;
  const indexDir = join(distDir, indexRel);

  const plain = Buffer.from(packagesIndex(o.stanzas));
  const t1 = performance.now();
  // Compressors run off the main thread (zlib pool, xz process) while we hash the plain text.
  const gzPromise = gzipAsync(plain, { level: o.gzipLevel ?? 6 });
  const xzPromise = compressXz(plain, o.xz);
  gzPromise.catch(() => undefined);
  xzPromise.catch(() => undefined);
  const variants: Array<{ name: string; data: Buffer; digests: ContentDigests }> = [
    { name: 'Packages', data: plain, digests: await hashBytes(plain) },
  ];
  const [gz, xz] = await Promise.all([gzPromise, xzPromise]);
  variants.push({ name: 'Packages.gz', data: gz, digests: await hashBytes(gz) });
  variants.push({ name: 'Packages.xz', data: xz, digests: await hashBytes(xz) });
  const t2 = performance.now();

  const date = o.date ?? releaseDate(process.env, new Date());
  const files: ReleaseFileEntry[] = variants.map((v) => ({ path: `${indexRel}/${v.name}`, ...v.digests }));
  const release = releaseFile({
    origin: o.origin,
    label: o.label,
    suite: o.suite ?? o.codename,
    codename: o.codename,
    date,
    validUntil: o.validForSeconds ? new Date(date.getTime() + o.validForSeconds * 1000) : null,
    architectures: [arch],
    components: [component],
    description: o.description ?? null,
    acquireByHash: true,
    files,
  });
  const [inRelease, releaseGpg] = await Promise.all([o.signer.clearSign(release), o.signer.detachedSign(release)]);
  const t3 = performance.now();

  const current: string[] = [];
  for (const v of variants) current.push(...(await writeByHash(indexDir, v.data, v.digests, writeOpts)));
  for (const v of variants) await writeFileAtomic(join(indexDir, v.name), v.data, writeOpts);
  await writeFileAtomic(join(distDir, 'Release'), release, writeOpts);
  await writeFileAtomic(join(distDir, 'Release.gpg'), releaseGpg, writeOpts);
  await writeFileAtomic(join(distDir, 'InRelease'), inRelease, writeOpts);
  await pruneByHash(indexDir, current, o.keepGenerations ?? 3, o.byHashMinAgeSeconds ?? 600, writeOpts);
  const t4 = performance.now();

  return {
    release,
    files,
    timings: { build: t1 - t0, compress: t2 - t1, sign: t3 - t2, write: t4 - t3, total: t4 - t0 },
  };
}

/**
 * Store `data` under every `by-hash/<Algo>/<hex>` name: written once, hard-linked to the other
 * names. Existing names are content-addressed and complete (they were renamed into place), so
 * they are only touched to mark them as in use. Returns the paths relative to `indexDir`.
 */
async function writeByHash(indexDir: string, data: Buffer, d: ContentDigests, writeOpts: { noSync: boolean }): Promise<string[]> {
  const rels = BY_HASH_DIRS.map(([dir, algo]) => `by-hash/${dir}/${d[algo]}`);
  const exists = await Promise.all(rels.map((r) => stat(join(indexDir, r)).then((s) => s.isFile(), () => false)));
  let source = rels.find((_, i) => exists[i]);
  for (const [i, rel] of rels.entries()) {
    if (exists[i]) continue;
    const target = join(indexDir, rel);
    if (source === undefined) {
      await writeFileAtomic(target, data, writeOpts);
      source = rel;
      continue;
    }
    await mkdir(dirname(target), { recursive: true });
    const tmp = tempPathFor(target);
    try {
      await link(join(indexDir, source), tmp);
    } catch (err) {
      if (!isErrno(err, 'EXDEV', 'EPERM', 'ENOTSUP', 'EMLINK')) throw err;
      await writeFileAtomic(target, data, writeOpts); // no hard links here: a plain copy
      continue;
    }
    await rename(tmp, target);
    if (!writeOpts.noSync) await fsyncDir(dirname(target));
  }
  const now = new Date();
  await Promise.all(rels.map((r) => utimes(join(indexDir, r), now, now)));
  return rels;
}

/**
 * Remember this generation's by-hash files and delete files that belong to none of the last
 * `keep` generations and are older than `minAgeSeconds`.
 */
async function pruneByHash(indexDir: string, current: string[], keep: number, minAgeSeconds: number, writeOpts: { noSync: boolean }): Promise<void> {
  const manifestPath = join(indexDir, 'by-hash', GENERATIONS_FILE);
  let generations: string[][] = [];
  try {
    const parsed: unknown = JSON.parse(await readFile(manifestPath, 'utf8'));
    if (Array.isArray(parsed)) generations = parsed.filter((g): g is string[] => Array.isArray(g) && g.every((p) => typeof p === 'string'));
  } catch (err) {
    // A missing or damaged manifest only means less is known to keep; the age rule still protects.
    if (!isErrno(err, 'ENOENT') && !(err instanceof SyntaxError)) throw err;
  }
  generations = [current, ...generations.filter((g) => g.join() !== current.join())].slice(0, keep + 1);
  const kept = new Set(generations.flat());
  const cutoff = Date.now() - minAgeSeconds * 1000;
  for (const [dir] of BY_HASH_DIRS) {
    let names: string[];
    try {
      names = await readdir(join(indexDir, 'by-hash', dir));
    } catch (err) {
      if (isErrno(err, 'ENOENT')) continue;
      throw err;
    }
    for (const name of names) {
      const rel = `by-hash/${dir}/${name}`;
      if (kept.has(rel) || name.startsWith('.')) continue;
      const info = await stat(join(indexDir, rel)).catch(() => null);
      if (info && info.mtimeMs < cutoff) await rm(join(indexDir, rel), { force: true });
    }
  }
  await writeFileAtomic(manifestPath, `${JSON.stringify(generations)}\n`, writeOpts);
}
