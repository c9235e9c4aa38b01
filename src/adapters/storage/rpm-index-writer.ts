import { mkdir, open, readdir, readFile, rename, type FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Signer } from '../signing/signer.js';
import { openCutCopy, removeFile, replaceFilesAtomic, writeFileAtomic } from './atomic.js';
import { tempPathFor } from './temp-names.js';
import type { Distribution } from '../../domain/distributions.js';
import { documentHref, repomdRecord, type PackageChunks } from '../../domain/repo/rpm/assemble.js';
import { DOCUMENT_TYPES, GzipXmlDocument, type DocumentFacts, type DocumentType } from '../../domain/repo/rpm/gzip-document.js';
import { repomdXml } from '../../domain/repo/rpm/repomd.js';
import { rpmTreeRoot } from '../../domain/repo/rpm/tree.js';
import type { IndexEntry, IndexWriter } from './interfaces.js';

/** How many earlier repodata generations stay on disk for clients still reading them. */
const KEEP_GENERATIONS = 3;
const HISTORY_FILE = '.generations.json';
const GENERATED_NAME = /^[0-9a-f]{64}-(primary|filelists|other)\.xml\.gz$/;

/** One published document of a tree: where its file is, and the document to extend it from. */
interface PublishedDocument {
  document: GzipXmlDocument;
  path: string;
}

/** What this writer last published in one architecture's tree. */
interface PublishedTree {
  documents: Record<DocumentType, PublishedDocument>;
  repomd: string;
}

/** A tree just published, and the removal of its old generations' files, run once the publish has answered. */
type JustPublished = PublishedTree & { cleanUp: () => Promise<void> };

/** What the writer remembers of a distribution between publishes: a few hash states per document, whatever its size. */
interface DistributionState {
  architectures: string;
  trees: Map<string, PublishedTree>;
}

/** A tree's packages: one architecture's and every `noarch` one (every package where there is one architecture). */
const listedIn = (dist: Distribution, arch: string) => (e: { arch: string }) =>
  dist.architectures.length === 1 || e.arch === arch || e.arch === 'noarch';

const parsed = (entries: readonly IndexEntry[]) => entries.map((e) => ({ arch: e.arch, chunks: JSON.parse(e.text) as PackageChunks }));
const joined = (chunks: readonly PackageChunks[], type: DocumentType) => chunks.map((c) => c[type]).join('');

/**
 * A document being written to a temp file in its repodata folder: pieces are compressed side by
 * side on the thread pool and written in order; {@link finish} moves the whole file to its
 * content-addressed name.
 */
class DocumentFile {
  private writing: Promise<unknown>;

  private constructor(
    private readonly document: GzipXmlDocument,
    private readonly handle: FileHandle,
    private readonly temp: string,
    first: Buffer,
  ) {
    this.writing = handle.writeFile(first);
    this.writing.catch(() => undefined); // surfaces through the next add or finish
  }

  /** A new document's file, its head written. */
  static async begin(repodata: string, type: DocumentType): Promise<DocumentFile> {
    const { document, bytes } = await GzipXmlDocument.begin(type);
    const temp = tempPathFor(join(repodata, `${type}.xml.gz`));
    return new DocumentFile(document, await open(temp, 'wx', 0o644), temp, bytes);
  }

  /**
   * A new generation of a published document: a copy of its file cut before the tail (a reflink
   * where the filesystem has them), extended from a fork of its document.
   */
  static async extend(repodata: string, published: PublishedDocument): Promise<DocumentFile> {
    const document = published.document.fork();
    const temp = tempPathFor(published.path);
    return new DocumentFile(document, await openCutCopy(published.path, temp, document.bodySize), temp, Buffer.alloc(0));
  }

  /** Adds a piece; settles once it is written (pieces of later calls may already be compressing). */
  add(text: string): Promise<unknown> {
    const piece = this.document.add(text);
    piece.catch(() => undefined); // surfaces through `writing`
    this.writing = this.writing.then(() => piece).then((bytes) => this.handle.writeFile(bytes));
    return this.writing;
  }

  /** Writes the tail, fsyncs, closes and moves the file to its name; the file stays extendable through the returned document. */
  async finish(repodata: string, sync: boolean): Promise<PublishedDocument & { facts: DocumentFacts }> {
    await this.writing;
    const { bytes, facts } = await this.document.finish();
    await this.handle.writeFile(bytes);
    if (sync) await this.handle.sync();
    await this.handle.close();
    const path = join(repodata, documentHref(this.document.type, facts.checksum).slice('repodata/'.length));
    await rename(this.temp, path);
    return { document: this.document, path, facts };
  }

  async abort(): Promise<void> {
    await this.writing.catch(() => undefined);
    await this.handle.close().catch(() => undefined);
    await removeFile(this.temp);
  }
}

/** One tree's three documents being written. */
class TreeWrite {
  private constructor(
    readonly arch: string,
    readonly root: string,
    private readonly files: DocumentFile[],
  ) {}

  static async begin(root: string, arch: string, from: PublishedTree | null): Promise<TreeWrite> {
    const repodata = join(root, 'repodata');
    if (!from) await mkdir(repodata, { recursive: true });
    const opened = await Promise.allSettled(DOCUMENT_TYPES.map((type) => (from ? DocumentFile.extend(repodata, from.documents[type]) : DocumentFile.begin(repodata, type))));
    const files = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const failed = opened.find((o) => o.status === 'rejected');
    if (failed) {
      await Promise.all(files.map((f) => f.abort()));
      throw failed.reason;
    }
    return new TreeWrite(arch, root, files);
  }

  add(chunks: readonly PackageChunks[]): Promise<unknown> {
    if (chunks.length === 0) return Promise.resolve();
    return Promise.all(this.files.map((f, i) => f.add(joined(chunks, DOCUMENT_TYPES[i]!))));
  }

  /** Finishes the documents; then signs and writes repomd.xml, which names them. */
  async publish(signer: Signer, timestamp: number, sync: boolean): Promise<JustPublished> {
    const repodata = join(this.root, 'repodata');
    let done: Awaited<ReturnType<DocumentFile['finish']>>[];
    try {
      done = await Promise.all(this.files.map((f) => f.finish(repodata, sync)));
    } catch (error) {
      await this.abort();
      throw error;
    }
    const records = done.map((d, i) => repomdRecord(DOCUMENT_TYPES[i]!, d.facts, timestamp));
    const repomd = repomdXml(String(timestamp), records);
    const signature = await signer.detachedSign(repomd);
    // The signature first: a client that reads the new repomd.xml finds its signature.
    await replaceFilesAtomic(repodata, [{ name: 'repomd.xml.asc', data: signature }, { name: 'repomd.xml', data: repomd }], { noSync: !sync, parentMustExist: true });
    const documents = Object.fromEntries(done.map((d, i) => [DOCUMENT_TYPES[i]!, { document: d.document, path: d.path }])) as Record<DocumentType, PublishedDocument>;
    const current = done.map((d) => basename(d.path));
    return { documents, repomd, cleanUp: () => pruneOldGenerations(repodata, current, sync) };
  }

  abort(): Promise<unknown> {
    return Promise.all(this.files.map((f) => f.abort()));
  }
}

/** Keeps the files of the last few generations (a client may still be reading one), removes older ones. */
async function pruneOldGenerations(repodata: string, current: string[], sync: boolean): Promise<void> {
  const historyPath = join(repodata, HISTORY_FILE);
  let history: string[][] = [];
  try {
    history = JSON.parse(await readFile(historyPath, 'utf8')) as string[][];
  } catch {
    history = [];
  }
  history = [current, ...history.filter((g) => g.join() !== current.join())].slice(0, KEEP_GENERATIONS);
  await writeFileAtomic(historyPath, JSON.stringify(history), { noSync: !sync });
  const keep = new Set(history.flat().map((p) => p.replace(/^repodata\//, '')));
  for (const name of await readdir(repodata)) {
    if (GENERATED_NAME.test(name) && !keep.has(name)) await removeFile(join(repodata, name));
  }
}

/**
 * repodata for one RPM distribution: one tree per architecture (`rpm/<codename>/<arch>/`), each
 * listing that architecture's packages and every `noarch` one. The data files have
 * content-addressed names, so a new generation is written beside the old one; repomd.xml.asc and
 * repomd.xml are renamed into place last, and the files of the previous generations are removed
 * only once they are several generations old, so a client that read an earlier repomd.xml still
 * finds what it names.
 *
 * A full write streams: the entries arrive in batches and each batch is compressed and written
 * before the next is read, so memory does not grow with the distribution. The writer then keeps,
 * per document, the hash states of what it wrote (see gzip-document.ts), and publishing after an
 * upload appends: each document of the trees that list the new packages is copied, cut before
 * its tail and extended by one piece, with its digests continued from the saved states. A tree
 * with nothing new (another architecture's upload) is not written again. Old generations are
 * removed after the publish has answered, before the next one starts. That removal deletes every
 * generated file its history does not name, so another writer (a replica) must not publish the
 * tree until {@link settled} has settled: the publisher awaits it under its publishing lock.
 */
export class RpmIndexWriter implements IndexWriter {
  private readonly states = new Map<string, DistributionState>();
  /** Per distribution: the removal of old generations after its last publish (the next publish waits for it). */
  private readonly cleanUps = new Map<string, Promise<void>>();
  private readonly now: () => Date;
  private readonly sync: boolean;
  private readonly onCleanUpError: (error: unknown) => void;

  constructor(
    private readonly repoDir: string,
    options: { now?: () => Date; sync?: boolean; onCleanUpError?: (error: unknown) => void } = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.sync = options.sync ?? true;
    this.onCleanUpError = options.onCleanUpError ?? (() => undefined);
  }

  write(dist: Distribution, entries: readonly IndexEntry[], signer: Signer): Promise<void> {
    return this.writeBatches(dist, (async function* () { yield entries; })(), signer);
  }

  async writeBatches(dist: Distribution, batches: AsyncIterable<readonly IndexEntry[]>, signer: Signer): Promise<void> {
    await this.settled(dist.codename);
    this.states.delete(dist.codename);
    const trees: TreeWrite[] = [];
    try {
      for (const arch of dist.architectures) trees.push(await TreeWrite.begin(join(this.repoDir, rpmTreeRoot(dist, arch)), arch, null));
      // One batch is compressed and written while the next is read.
      let previous: Promise<unknown> = Promise.resolve();
      for await (const batch of batches) {
        const entries = parsed(batch);
        const current = Promise.all(trees.map((t) => t.add(entries.filter(listedIn(dist, t.arch)).map((e) => e.chunks))));
        current.catch(() => undefined); // awaited below, in order
        await previous;
        previous = current;
      }
      await previous;
    } catch (error) {
      await Promise.all(trees.map((t) => t.abort()));
      throw error;
    }
    const timestamp = this.timestamp();
    const published: JustPublished[] = [];
    try {
      for (const tree of trees) published.push(await tree.publish(signer, timestamp, this.sync));
    } finally {
      this.cleanUpAfter(dist.codename, published);
    }
    this.states.set(dist.codename, { architectures: dist.architectures.join(), trees: new Map(published.map((p, i) => [trees[i]!.arch, p])) });
  }

  async append(dist: Distribution, entries: readonly IndexEntry[], signer: Signer): Promise<boolean> {
    await this.settled(dist.codename);
    const state = this.states.get(dist.codename);
    if (!state || state.architectures !== dist.architectures.join()) return false;
    const all = parsed(entries);
    const work: { arch: string; from: PublishedTree; chunks: PackageChunks[] }[] = [];
    for (const arch of dist.architectures) {
      const chunks = all.filter(listedIn(dist, arch)).map((e) => e.chunks);
      if (chunks.length === 0) continue;
      const from = state.trees.get(arch);
      // Another writer (a replica, a restart) published this tree since: extending ours would undo that.
      if (!from || !(await this.stillOnDisk(dist, arch, from))) return false;
      work.push({ arch, from, chunks });
    }
    this.states.delete(dist.codename);
    const timestamp = this.timestamp();
    const trees = new Map(state.trees);
    const published: JustPublished[] = [];
    try {
      for (const { arch, from, chunks } of work) {
        const tree = await TreeWrite.begin(join(this.repoDir, rpmTreeRoot(dist, arch)), arch, from);
        try {
          await tree.add(chunks);
        } catch (error) {
          await tree.abort();
          throw error;
        }
        const done = await tree.publish(signer, timestamp, this.sync);
        published.push(done);
        trees.set(arch, done);
      }
    } finally {
      this.cleanUpAfter(dist.codename, published);
    }
    this.states.set(dist.codename, { architectures: state.architectures, trees });
    return true;
  }

  forget(codename: string): void {
    this.states.delete(codename);
  }

  /** Settles once the clean-up after the distribution's last publish is done. */
  async settled(codename: string): Promise<void> {
    await this.cleanUps.get(codename);
  }

  /**
   * Removes the published trees' old generations after the publish has answered. The next
   * publish of the distribution waits for it: a removal running beside a write could take the
   * files of a generation not yet in the history.
   */
  private cleanUpAfter(codename: string, published: readonly JustPublished[]): void {
    if (published.length === 0) return;
    const done = (async () => {
      for (const p of published) await p.cleanUp().catch(this.onCleanUpError);
    })();
    this.cleanUps.set(codename, done);
    void done.then(() => { if (this.cleanUps.get(codename) === done) this.cleanUps.delete(codename); });
  }

  private timestamp(): number {
    return Math.floor(this.now().getTime() / 1000);
  }

  private async stillOnDisk(dist: Distribution, arch: string, tree: PublishedTree): Promise<boolean> {
    try {
      return (await readFile(join(this.repoDir, rpmTreeRoot(dist, arch), 'repodata', 'repomd.xml'), 'utf8')) === tree.repomd;
    } catch {
      return false;
    }
  }
}
