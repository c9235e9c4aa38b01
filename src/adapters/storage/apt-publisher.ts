/**
 * Publish one APT distribution to disk so that a client never sees a half-published state:
 *   1. for every component and architecture, build Packages, compress to .gz and .xz, hash every
 *      variant — or, when only packages were added since the last publish by this process, append
 *      them to the previous files of the indexes they belong to;
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
import { prepareSpares, pruneByHash } from './apt-by-hash.js';
import { appendToIndex, canAppendTo, writeFullIndex, writtenVariants, type AptIndexState, type IndexFileOptions, type StagedWrite } from './apt-index-files.js';
import { stageFiles } from './atomic.js';
import { appendContents, contentsReleaseEntries, exposeContents, writeContentsFile } from './apt-contents-files.js';
import { Demultiplexer } from './demultiplexer.js';
import type { SpareCopies } from './spare-copies.js';
import type { XzOptions } from './xz.js';

/** One package's stanza and where it is listed: its component, and its architecture (`all`: every one). */
export interface AptEntry {
  component: string;
  arch: string;
  stanza: string;
  /** Its lines of the component's Contents files (`contentsLines`), '' when none. */
  contents?: string;
  /** On append: add only its Contents lines (its stanza is in the index already). */
  contentsOnly?: boolean;
}

/** The index files of every component/architecture of a distribution, as this process last wrote them. */
export interface AptDistributionState {
  distDir: string;
  /** By index path (`main/binary-amd64`). */
  indexes: Map<string, AptIndexState>;
  /** By component: its Contents-<arch>.gz files. */
  contents: Map<string, AptIndexState>;
}

/** What to publish, and how. */
export interface AptPublishOptions {
  /** The APT root that holds `dists/` and `pool/`, e.g. `<DATA_DIR>/repo/apt`. */
  repoRoot: string;
  codename: string;
  /** The packages, in their final, deterministic order (see `packageStanza`). */
  entries?: readonly AptEntry[];
  /** Instead of `entries`, for a full publish: the entries in batches, read as they are written. */
  batches?: AsyncIterable<readonly AptEntry[]>;
  /** Shorthand for `entries` all in the first component and architecture. */
  stanzas?: readonly string[];
  signer: Signer;
  origin: string;
  label: string;
  /** Default: the codename. */
  suite?: string;
  description?: string;
  /** Default `['main']`. */
  components?: readonly string[];
  /** Default `['amd64']` (`all` packages are listed in each). */
  architectures?: readonly string[];
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
  /** Told of a failed by-hash pruning, which runs after the publish has answered (default: ignored; the next full publish sweeps). */
  onCleanUpError?: (error: unknown) => void;
  /** Where to keep copies of the files a publish wrote, made after it for the next append to extend (default: none; see spare-copies.ts). */
  spares?: SpareCopies;
}

/** What was published, with timings (ms) for monitoring. */
export interface AptPublishResult {
  release: string;
  files: ReleaseFileEntry[];
  /**
   * compress: index files written (a full publish) or only compressed and hashed (an append); sign:
   * signing and writing the Release files under temporary names, an append's index files written
   * meanwhile; write: Release, Release.gpg, InRelease switched in. Within the sign stage, which
   * side set its length: `signed` (signature made) and `filesWritten` (the index files on disk),
   * each from the stage's start.
   */
  timings: { build: number; compress: number; sign: number; write: number; total: number; signed: number; filesWritten: number };
  /** Keep it for `appendAptDistribution`. */
  state: AptDistributionState;
  mode: 'full' | 'append';
}

const NAME = /^[a-z0-9][a-z0-9.+-]*$/;
/** The architecture of source package entries: listed in `<component>/source/Sources`. */
const SOURCE = 'source';
/** The index file base name of an index path. */
const baseNameOf = (rel: string) => (rel.endsWith(`/${SOURCE}`) ? 'Sources' : 'Packages');

/**
 * Publishes of the same distribution in this process run one after the other, each with the
 * clean-up it leaves behind (by-hash pruning): the next one starts after it, but the caller has
 * its answer as soon as the new InRelease is in place.
 */
const running = new Map<string, Promise<void>>();

/** What a publish answers, and the clean-up to run before the next publish of the distribution. */
interface WithCleanUp<T> {
  value: T;
  cleanUp?: () => Promise<unknown>;
}

const runningKey = (repoRoot: string, codename: string) => join(repoRoot, 'dists', codename);

function serialised<T>(o: AptPublishOptions, task: () => Promise<WithCleanUp<T>>): Promise<T> {
  const key = runningKey(o.repoRoot, o.codename);
  const outcome = (running.get(key) ?? Promise.resolve()).then(task);
  const tracked = outcome.then(
    (done) => done.cleanUp?.().then(() => undefined, (error: unknown) => o.onCleanUpError?.(error)),
    () => undefined,
  );
  running.set(key, tracked);
  void tracked.then(() => { if (running.get(key) === tracked) running.delete(key); });
  return outcome.then((done) => done.value);
}

/** Settles once the publishes of a distribution under way in this process and their clean-ups are done. */
export async function aptPublishingSettled(repoRoot: string, codename: string): Promise<void> {
  const key = runningKey(repoRoot, codename);
  // A publish queued meanwhile is waited for too; an entry still in place once settled is done.
  for (let current = running.get(key); current; current = running.get(key)) {
    await current;
    if (running.get(key) === current) break;
  }
}

interface Layout {
  components: readonly string[];
  architectures: readonly string[];
  distDir: string;
  /**
   * Index paths (`<component>/binary-<arch>`, then `<component>/source`), components first then
   * architectures, as Release lists them.
   */
  indexRels: string[];
  /** The indexes an entry is listed in. */
  route(entry: AptEntry): string[];
  /** The Contents files (`<component>/Contents-<arch>`) an entry is listed in: its indexes'. */
  contentsRoute(entry: AptEntry): string[];
}

function layout(o: AptPublishOptions): Layout {
  const components = o.components ?? ['main'];
  const architectures = o.architectures ?? ['amd64'];
  for (const [what, values] of [['codename', [o.codename]], ['component', components], ['architecture', architectures]] as const) {
    if (values.length === 0) throw new DomainError('invalid', 'bad_distribution', `no ${what}`);
    for (const value of values) {
      if (!NAME.test(value)) throw new DomainError('invalid', 'bad_distribution', `invalid ${what} ${JSON.stringify(value)}`);
    }
  }
  // Every component has a Sources index (source packages have the architecture `source`).
  const indexRels = components.flatMap((c) => [...architectures.map((a) => `${c}/binary-${a}`), `${c}/source`]);
  const known = new Set(indexRels);
  const archesOf = (e: AptEntry) => (e.arch === 'all' ? architectures : e.arch === SOURCE ? [] : [e.arch]).filter((a) => known.has(`${e.component}/binary-${a}`));
  return {
    components,
    architectures,
    distDir: join(o.repoRoot, 'dists', o.codename),
    indexRels,
    route: (e) => (e.arch === SOURCE ? (known.has(`${e.component}/source`) ? [`${e.component}/source`] : []) : archesOf(e).map((a) => `${e.component}/binary-${a}`)),
    contentsRoute: (e) => (e.contents ? archesOf(e).map((a) => contentsKey(e.component, a)) : []),
  };
}

const contentsKey = (component: string, arch: string) => `${component}/Contents-${arch}`;

const entriesOf = (o: AptPublishOptions, l: Layout): readonly AptEntry[] =>
  o.entries ?? (o.stanzas ?? []).map((stanza) => ({ component: l.components[0]!, arch: l.architectures[0]!, stanza }));

/**
 * Appends between full rewrites. Each append adds a gzip member and an xz block of a few stanzas,
 * compressed on their own; after this many, a full rewrite (seconds at 50,000 packages) restores
 * the compression ratio, so in a steady stream of uploads it costs a few milliseconds per publish.
 */
const MAX_APPENDS = 200;

const fileOptions = (o: AptPublishOptions): IndexFileOptions => ({
  maxAppends: o.maxAppends ?? MAX_APPENDS, gzipLevel: o.gzipLevel ?? 6, xz: o.xz ?? {}, sync: o.sync !== false, ...(o.spares ? { spares: o.spares } : {}),
});

/** Build, sign and atomically publish `dists/<codename>/` from every entry. */
export function publishAptDistribution(options: AptPublishOptions): Promise<AptPublishResult> {
  return serialised(options, async () => {
    const t0 = performance.now();
    const l = layout(options);
    const t1 = performance.now();
    const source = options.batches ?? (async function* () { yield entriesOf(options, l); })();
    // One pass over the entries feeds every index and Contents file as it is written (memory stays flat).
    const contentsKeys = l.components.flatMap((c) => l.architectures.map((a) => contentsKey(c, a)));
    const split = new Demultiplexer(
      source,
      [...l.indexRels, ...contentsKeys],
      (e: AptEntry) => [...l.route(e), ...l.contentsRoute(e)],
      (e, key) => (key.includes('/Contents-') ? e.contents! : e.stanza),
    );
    const opts = fileOptions(options);
    const packages = Promise.all(l.indexRels.map((rel) => writeFullIndex(join(l.distDir, rel), split.stream(rel), opts, baseNameOf(rel)).finally(() => split.close(rel))));
    const contents = Promise.all(l.components.map(async (c) => {
      const dir = join(l.distDir, c);
      const files = await Promise.all(l.architectures.map((a) => writeContentsFile(dir, a, split.stream(contentsKey(c, a)), opts).finally(() => split.close(contentsKey(c, a)))));
      return exposeContents(dir, files, 0, opts);
    }));
    const [states, contentsStates] = await Promise.all([packages, contents]);
    const state: AptDistributionState = {
      distDir: l.distDir,
      indexes: new Map(l.indexRels.map((rel, i) => [rel, states[i]!])),
      contents: new Map(l.components.map((c, i) => [c, contentsStates[i]!])),
    };
    return release(options, l, state, 'full', t0, t1);
  });
}

/**
 * Publishes `options.entries` appended to the indexes this process last wrote (`previous`): only
 * the new bytes are compressed and hashed, only the indexes they belong to change. Null when the
 * previous files cannot be extended; the caller then publishes in full.
 */
export function appendAptDistribution(options: AptPublishOptions & { previous: AptDistributionState }): Promise<AptPublishResult | null> {
  return serialised(options, async () => {
    const t0 = performance.now();
    const l = layout(options);
    const previous = options.previous;
    if (previous.distDir !== l.distDir || previous.indexes.size !== l.indexRels.length || !l.indexRels.every((rel) => previous.indexes.has(rel))) return { value: null };
    if (!l.components.every((c) => previous.contents.get(c)?.variants.length === l.architectures.length)) return { value: null };
    const added = new Map<string, string[]>();
    const addedContents = new Map<string, string[]>();
    const push = (map: Map<string, string[]>, key: string, text: string) => {
      let list = map.get(key);
      if (!list) map.set(key, (list = []));
      list.push(text);
    };
    for (const entry of entriesOf(options, l)) {
      if (!entry.contentsOnly) for (const rel of l.route(entry)) push(added, rel, entry.stanza);
      for (const key of l.contentsRoute(entry)) push(addedContents, key, entry.contents!);
    }
    const opts = fileOptions(options);
    const touchedComponents = new Set([...addedContents.keys()].map((k) => k.slice(0, k.indexOf('/'))));
    // Checked for all before any changes: an index is never left extended under an old Release.
    if ([...added.keys()].some((rel) => !canAppendTo(previous.indexes.get(rel)!, opts))) return { value: null };
    if ([...touchedComponents].some((c) => !canAppendTo(previous.contents.get(c)!, opts))) return { value: null };
    const t1 = performance.now();
    // Every index and Contents file is its own set of files: all are extended side by side. Their
    // new digests come first, so Release is signed while the files are still being written.
    const [indexStages, contentsStages] = await Promise.all([
      Promise.all([...added].map(([rel, stanzas]) => appendToIndex(previous.indexes.get(rel)!, Buffer.from(packagesIndex(stanzas)), opts))),
      Promise.all([...touchedComponents].map(async (component): Promise<StagedWrite<AptIndexState> | null> => {
        const before = previous.contents.get(component)!;
        const dir = join(l.distDir, component);
        const files = await Promise.all(before.variants.map((file) => {
          const lines = addedContents.get(contentsKey(component, file.name.slice('Contents-'.length, -'.gz'.length)));
          return lines ? appendContents(dir, file, lines.join(''), opts) : { state: file, written: Promise.resolve() };
        }));
        const staged = files.filter((f) => f !== null);
        if (staged.length !== files.length) {
          await Promise.allSettled(staged.map((f) => f.written));
          return null;
        }
        const variants = staged.map((f) => f.state);
        const written = Promise.all(staged.map((f) => f.written)).then(() => exposeContents(dir, variants, before.appends + 1, opts)).then(() => undefined);
        written.catch(() => undefined);
        return { state: { indexDir: dir, variants, appends: before.appends + 1 }, written };
      })),
    ]);
    const stages = [...indexStages, ...contentsStages];
    const writing = Promise.all(stages.map((s) => s?.written));
    if (stages.some((s) => s === null)) {
      // As before the staging: what was extended stays under the old Release until the full publish that follows rewrites it.
      await writing.catch(() => undefined);
      return { value: null };
    }
    const indexes = new Map(previous.indexes);
    [...added.keys()].forEach((rel, i) => indexes.set(rel, indexStages[i]!.state));
    const contents = new Map(previous.contents);
    [...touchedComponents].forEach((component, i) => contents.set(component, contentsStages[i]!.state));
    const changed = new Set([...added.keys(), ...touchedComponents]);
    return release(options, l, { distDir: l.distDir, indexes, contents }, 'append', t0, t1, changed, writing.then(() => undefined));
  });
}

/**
 * Release from the recorded digests, signed; Release, Release.gpg and InRelease replaced last.
 * By-hash pruning is left as the clean-up (see `serialised`).
 */
async function release(
  o: AptPublishOptions, l: Layout, state: AptDistributionState, mode: 'full' | 'append', t0: number, t1: number, changed?: Set<string>,
  /** The index files `state` names, still being written: Release is signed meanwhile and replaced once they are on disk. */
  writing: Promise<void> = Promise.resolve(),
): Promise<WithCleanUp<AptPublishResult>> {
  const t2 = performance.now();
  const date = o.date ?? releaseDate(process.env, new Date());
  const files: ReleaseFileEntry[] = [
    ...l.components.flatMap((c) => contentsReleaseEntries(c, state.contents.get(c)!)),
    ...l.indexRels.flatMap((rel) => writtenVariants(state.indexes.get(rel)!).map((v) => ({ path: `${rel}/${v.name}`, ...v.digests }))),
  ];
  const text = releaseFile({
    origin: o.origin,
    label: o.label,
    suite: o.suite ?? o.codename,
    codename: o.codename,
    date,
    validUntil: o.validForSeconds ? new Date(date.getTime() + o.validForSeconds * 1000) : null,
    architectures: [...l.architectures],
    components: [...l.components],
    description: o.description ?? null,
    acquireByHash: true,
    files,
  });
  // Signed, and the three written under temporary names, while the index files are written; then
  // switched in (InRelease last) under one folder fsync: each name is the old file or the new one,
  // and every file they name is on disk.
  let signed = 0;
  let filesWritten = 0;
  void writing.then(() => { filesWritten = performance.now() - t2; }, () => undefined);
  const staging = o.signer.signRelease(text).then(({ inRelease, releaseGpg }) => {
    signed = performance.now() - t2;
    return stageFiles(l.distDir, [
      { name: 'Release', data: text },
      { name: 'Release.gpg', data: releaseGpg },
      { name: 'InRelease', data: inRelease },
    ], { noSync: o.sync === false, parentMustExist: true });
  });
  const [staged, written] = await Promise.allSettled([staging, writing]);
  if (written.status === 'rejected') {
    if (staged.status === 'fulfilled') await staged.value.discard();
    throw written.reason;
  }
  if (staged.status === 'rejected') throw staged.reason;
  const t3 = performance.now();
  await staged.value.commit();
  const t4 = performance.now();
  const prune = { keep: o.keepGenerations ?? 3, minAgeSeconds: o.byHashMinAgeSeconds ?? 60, maxKept: o.maxKeptGenerations ?? 20, sweep: mode === 'full' };
  return {
    value: {
      release: text,
      files,
      state,
      mode,
      timings: { build: t1 - t0, compress: t2 - t1, sign: t3 - t2, write: t4 - t3, total: t4 - t0, signed, filesWritten },
    },
    cleanUp: () => {
      const rewritten = [
        ...l.indexRels.filter((rel) => !changed || changed.has(rel)).map((rel) => state.indexes.get(rel)!),
        ...l.components.filter((c) => !changed || changed.has(c)).map((c) => state.contents.get(c)!),
      ];
      // The files written are the likeliest to be extended next: copied shortly, while nothing waits.
      const opts = fileOptions(o);
      for (const index of rewritten) if (canAppendTo(index, opts)) prepareSpares(index.indexDir, index.variants, opts);
      return Promise.all(rewritten.map((index) => pruneByHash(index.indexDir, index, prune)));
    },
  };
}
