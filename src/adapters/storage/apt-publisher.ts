/**
 * Publish one APT distribution to disk so that a client never sees a half-published state:
 *   1. build Packages, compress to .gz and .xz, hash every variant — or, when only packages were
 *      added since the last publish by this process, append them to the previous files;
 *   2. write the `by-hash/` copies (content-addressed, so a client holding an older InRelease
 *      still finds the files it names);
 *   3. replace Packages, Packages.gz, Packages.xz;
 *   4. sign, then replace Release, Release.gpg and InRelease last.
 * Each file is replaced by an atomic rename. By-hash files of the last few generations are kept,
 * and none is deleted before it is `byHashMinAgeSeconds` old, so clients mid-update do not get
 * "Hash Sum mismatch".
 */
import { join } from 'node:path';
import { DomainError } from '../../domain/errors.js';
import { releaseDate, releaseFile, type ReleaseFileEntry } from '../../domain/repo/apt/release.js';
import { packagesIndex } from '../../domain/repo/apt/stanza.js';
import type { Signer } from '../signing/signer.js';
import { appendToIndex, pruneByHash, writeFullIndex, writtenVariants, type AptIndexState, type IndexFileOptions } from './apt-index-files.js';
import { writeFileAtomic } from './atomic.js';
import type { XzOptions } from './xz.js';

export type { AptIndexState } from './apt-index-files.js';

/** What to publish, and how. */
export interface AptPublishOptions {
  /** The APT root that holds `dists/` and `pool/`, e.g. `<DATA_DIR>/repo/apt`. */
  repoRoot: string;
  codename: string;
  /** Package stanzas in their final, deterministic order (see `packageStanza`). */
  stanzas: readonly string[];
  /** Instead of `stanzas`, for a full publish: the stanzas in batches, read as they are written. */
  batches?: AsyncIterable<readonly string[]>;
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
  /** By-hash generations always kept, the current one included (default 3). */
  keepGenerations?: number;
  /** Younger by-hash generations are kept too (default 60 s)… */
  byHashMinAgeSeconds?: number;
  /** …up to this many generations in all (default 20). */
  maxKeptGenerations?: number;
  gzipLevel?: number;
  xz?: XzOptions;
  /** Appends allowed before the next publish rewrites the index in full (default 200). */
  maxAppends?: number;
  /** fsync written files (default true; tests may turn it off). */
  sync?: boolean;
}

/** What was published, with timings (ms) for monitoring. */
export interface AptPublishResult {
  release: string;
  files: ReleaseFileEntry[];
  timings: { build: number; compress: number; sign: number; write: number; total: number };
  /** Keep it for `appendAptDistribution`. */
  state: AptIndexState;
  mode: 'full' | 'append';
}

const NAME = /^[a-z0-9][a-z0-9.+-]*$/;

/** Publishes of the same distribution in this process run one after the other. */
const running = new Map<string, Promise<unknown>>();

function serialised<T>(o: AptPublishOptions, task: () => Promise<T>): Promise<T> {
  const key = join(o.repoRoot, 'dists', o.codename);
  const previous = running.get(key) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(task);
  const tracked = next.catch(() => undefined);
  running.set(key, tracked);
  void tracked.then(() => { if (running.get(key) === tracked) running.delete(key); });
  return next;
}

function layout(o: AptPublishOptions) {
  const component = o.component ?? 'main';
  const arch = o.architecture ?? 'amd64';
  for (const [what, value] of [['codename', o.codename], ['component', component], ['architecture', arch]] as const) {
    if (!NAME.test(value)) throw new DomainError('invalid', 'bad_distribution', `invalid ${what} ${JSON.stringify(value)}`);
  }
  const distDir = join(o.repoRoot, 'dists', o.codename);
  const indexRel = `${component}/binary-${arch}`;
  return { component, arch, distDir, indexRel, indexDir: join(distDir, indexRel) };
}

/**
 * Appends between full rewrites. Each append adds a gzip member and an xz block of a few stanzas,
 * compressed on their own; after this many, a full rewrite (seconds at 50,000 packages) restores
 * the compression ratio, so in a steady stream of uploads it costs a few milliseconds per publish.
 */
const MAX_APPENDS = 200;

const fileOptions = (o: AptPublishOptions): IndexFileOptions => ({ maxAppends: o.maxAppends ?? MAX_APPENDS, gzipLevel: o.gzipLevel ?? 6, xz: o.xz ?? {}, sync: o.sync !== false });

/** Build, sign and atomically publish `dists/<codename>/` from every stanza. */
export function publishAptDistribution(options: AptPublishOptions): Promise<AptPublishResult> {
  return serialised(options, async () => {
    const t0 = performance.now();
    const l = layout(options);
    const t1 = performance.now();
    const batches = options.batches ?? (async function* () { yield options.stanzas; })();
    const state = await writeFullIndex(l.indexDir, batches, fileOptions(options));
    return release(options, l, state, 'full', t0, t1);
  });
}

/**
 * Publishes `options.stanzas` appended to the index this process last wrote (`previous`): only
 * the new bytes are compressed and hashed. Null when the previous files cannot be extended; the
 * caller then publishes in full.
 */
export function appendAptDistribution(options: AptPublishOptions & { previous: AptIndexState }): Promise<AptPublishResult | null> {
  return serialised(options, async () => {
    const t0 = performance.now();
    const l = layout(options);
    if (options.previous.indexDir !== l.indexDir) return null;
    const added = Buffer.from(packagesIndex(options.stanzas));
    const t1 = performance.now();
    const state = await appendToIndex(options.previous, added, fileOptions(options));
    if (!state) return null;
    return release(options, l, state, 'append', t0, t1);
  });
}

/** Release from the recorded digests, signed; Release, Release.gpg and InRelease replaced last. */
async function release(o: AptPublishOptions, l: ReturnType<typeof layout>, state: AptIndexState, mode: 'full' | 'append', t0: number, t1: number): Promise<AptPublishResult> {
  const t2 = performance.now();
  const date = o.date ?? releaseDate(process.env, new Date());
  const files: ReleaseFileEntry[] = writtenVariants(state).map((v) => ({ path: `${l.indexRel}/${v.name}`, ...v.digests }));
  const text = releaseFile({
    origin: o.origin,
    label: o.label,
    suite: o.suite ?? o.codename,
    codename: o.codename,
    date,
    validUntil: o.validForSeconds ? new Date(date.getTime() + o.validForSeconds * 1000) : null,
    architectures: [l.arch],
    components: [l.component],
    description: o.description ?? null,
    acquireByHash: true,
    files,
  });
  // Two signatures: a clear-signed message does not cover its text's final line break, so its
  // signature block cannot double as the detached Release.gpg over the whole file.
  const [inRelease, releaseGpg] = await Promise.all([o.signer.clearSign(text), o.signer.detachedSign(text)]);
  const t3 = performance.now();
  const writeOpts = { noSync: o.sync === false };
  await Promise.all([writeFileAtomic(join(l.distDir, 'Release'), text, writeOpts), writeFileAtomic(join(l.distDir, 'Release.gpg'), releaseGpg, writeOpts)]);
  await writeFileAtomic(join(l.distDir, 'InRelease'), inRelease, writeOpts);
  await pruneByHash(
    l.indexDir,
    state,
    { keep: o.keepGenerations ?? 3, minAgeSeconds: o.byHashMinAgeSeconds ?? 60, maxKept: o.maxKeptGenerations ?? 20, sweep: mode === 'full' },
    o.sync !== false,
  );
  const t4 = performance.now();
  return {
    release: text,
    files,
    state,
    mode,
    timings: { build: t1 - t0, compress: t2 - t1, sign: t3 - t2, write: t4 - t3, total: t4 - t0 },
  };
}
