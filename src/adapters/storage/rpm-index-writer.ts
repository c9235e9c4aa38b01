import { copyFile, mkdir, open, readdir, readFile, rename, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Signer } from '../signing/signer.js';
import { isErrno, removeFile, replaceFilesAtomic, tempPathFor, writeFileAtomic } from './atomic.js';
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
    await copyFile(published.path, temp);
    await truncate(temp, document.bodySize);
    return new DocumentFile(document, await open(temp, 'a'), temp, Buffer.alloc(0));
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
    const files: DocumentFile[] = [];
    try {
      for (const type of DOCUMENT_TYPES) {
        files.push(await (from ? DocumentFile.extend(repodata, from.documents[type]) : inFolder(repodata, () => DocumentFile.begin(repodata, type))));
      }
    } catch (error) {
      await Promise.all(files.map((f) => f.abort()));
      throw error;
    }
    return new TreeWrite(arch, root, files);
  }

  add(chunks: readonly PackageChunks[]): Promise<unknown> {
    if (chunks.length === 0) return Promise.resolve();
    return Promise.all(this.files.map((f, i) => f.add(joined(chunks, DOCUMENT_TYPES[i]!))));
  }

  /** Finishes the documents; then signs and writes repomd.xml, which names them. */
  async publish(signer: Signer, timestamp: number, sync: boolean): Promise<PublishedTree> {
    const repodata = join(this.root, 'repodata');
    const done = await Promise.all(this.files.map((f) => f.finish(repodata, sync)));
    const records = done.map((d, i) => repomdRecord(DOCUMENT_TYPES[i]!, d.facts, timestamp));
    const repomd = repomdXml(String(timestamp), records);
    const signature = await signer.detachedSign(repomd);
    // The signature first: a client that reads the new repomd.xml finds its signature.
    await replaceFilesAtomic(repodata, [{ name: 'repomd.xml.asc', data: signature }, { name: 'repomd.xml', data: repomd }], { noSync: !sync, parentMustExist: true });
    await pruneOldGenerations(repodata, records.map((r) => r.href.slice('repodata/'.length)), sync);
    const documents = Object.fromEntries(done.map((d, i) => [DOCUMENT_TYPES[i]!, { document: d.document, path: d.path }])) as Record<DocumentType, PublishedDocument>;
    return { documents, repomd };
  }

  abort(): Promise<unknown> {
    return Promise.all(this.files.map((f) => f.abort()));
  }
}

/** Runs `create`; makes the folder first only if it fails for want of it. */
async function inFolder<T>(dir: string, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
    await mkdir(dir, { recursive: true });
    return create();
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
 * with nothing new (another architecture's upload) is not written again.
 */
export class RpmIndexWriter implements IndexWriter {
  private readonly states = new Map<string, DistributionState>();

  constructor(
    private readonly repoDir: string,
    private readonly now: () => Date = () => new Date(),
    private readonly sync = true,
  ) {}

  write(dist: Distribution, entries: readonly IndexEntry[], signer: Signer): Promise<void> {
    return this.writeBatches(dist, (async function* () { yield entries; })(), signer);
  }

  async writeBatches(dist: Distribution, batches: AsyncIterable<readonly IndexEntry[]>, signer: Signer): Promise<void> {
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
    const published = new Map<string, PublishedTree>();
    for (const tree of trees) published.set(tree.arch, await tree.publish(signer, timestamp, this.sync));
    this.states.set(dist.codename, { architectures: dist.architectures.join(), trees: published });
  }

  async append(dist: Distribution, entries: readonly IndexEntry[], signer: Signer): Promise<boolean> {
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
    for (const { arch, from, chunks } of work) {
      const tree = await TreeWrite.begin(join(this.repoDir, rpmTreeRoot(dist, arch)), arch, from);
      try {
        await tree.add(chunks);
      } catch (error) {
        await tree.abort();
        throw error;
      }
      trees.set(arch, await tree.publish(signer, timestamp, this.sync));
    }
    this.states.set(dist.codename, { architectures: state.architectures, trees });
    return true;
  }

  forget(codename: string): void {
    this.states.delete(codename);
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
