import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Signer } from '../signing/signer.js';
import { writeFileAtomic } from './atomic.js';
import type { Distribution } from '../../domain/distributions.js';
import { RepodataBuilder, type PackageChunks } from '../../domain/repo/rpm/assemble.js';
import { rpmTreeRoot } from '../../domain/repo/rpm/tree.js';
import type { IndexEntry, IndexWriter } from './interfaces.js';

/** How many earlier repodata generations stay on disk for clients still reading them. */
const KEEP_GENERATIONS = 3;
const HISTORY_FILE = '.generations.json';
/**
 * Distributions whose parsed entries and compressed segments stay in memory (~90 MB per 10,000
 * packages): the ones published last, where uploads are going; the others rebuild from scratch.
 */
const CACHED_DISTRIBUTIONS = 2;

/** What the writer remembers of a distribution between publishes. */
interface DistributionState {
  /** Stored entry → its parsed chunks, for the entries of the last publish. */
  parsed: Map<string, PackageChunks>;
  builder: RepodataBuilder;
}

/**
 * repodata for one RPM distribution. The data files have content-addressed names, so a new
 * generation is written beside the old one; repomd.xml.asc and repomd.xml are renamed into place
 * last, and the files of the previous generations are removed only once they are several
 * generations old, so a client that read an earlier repomd.xml still finds what it names.
 *
 * The writer lives as long as the service and remembers, per distribution, the parsed entries and
 * the compressed segments of the last publish: publishing after one upload parses one entry and
 * compresses one segment per document instead of the whole repository.
 */
export class RpmIndexWriter implements IndexWriter {
  private readonly states = new Map<string, DistributionState>();

  constructor(
    private readonly repoDir: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async write(dist: Distribution, entries: readonly IndexEntry[], signer: Signer): Promise<void> {
    const root = join(this.repoDir, rpmTreeRoot(dist));
    const state = this.states.get(dist.codename) ?? { parsed: new Map<string, PackageChunks>(), builder: new RepodataBuilder() };
    const parsed = new Map<string, PackageChunks>();
    // One architecture per RPM distribution: every entry (its own arch or noarch) is listed.
    const chunks = entries.map(({ text: e }) => {
      const c = parsed.get(e) ?? state.parsed.get(e) ?? (JSON.parse(e) as PackageChunks);
      parsed.set(e, c);
      return c;
    });
    const repodata = await state.builder.build(chunks, { timestamp: Math.floor(this.now().getTime() / 1000) });
    // Only now: a failed build leaves the previous state, which still describes valid chunks.
    this.states.delete(dist.codename);
    this.states.set(dist.codename, { parsed, builder: state.builder });
    while (this.states.size > CACHED_DISTRIBUTIONS) this.states.delete(this.states.keys().next().value!);
    await Promise.all(repodata.files.map((file) => writeFileAtomic(join(root, file.path), file.data)));
    const signature = await signer.detachedSign(repodata.repomd);
    await writeFileAtomic(join(root, 'repodata', 'repomd.xml.asc'), signature);
    await writeFileAtomic(join(root, 'repodata', 'repomd.xml'), repodata.repomd);
    await this.pruneOldGenerations(root, repodata.files.map((f) => f.path));
  }

  forget(codename: string): void {
    this.states.delete(codename);
  }

  private async pruneOldGenerations(root: string, current: string[]): Promise<void> {
    const historyPath = join(root, 'repodata', HISTORY_FILE);
    let history: string[][] = [];
    try {
      history = JSON.parse(await readFile(historyPath, 'utf8')) as string[][];
    } catch {
      history = [];
    }
    history = [current, ...history.filter((g) => g.join() !== current.join())].slice(0, KEEP_GENERATIONS);
    await writeFileAtomic(historyPath, JSON.stringify(history));
    const keep = new Set(history.flat().map((p) => p.replace(/^repodata\//, '')));
    for (const name of await readdir(join(root, 'repodata'))) {
      if (/^[0-9a-f]{64}-(primary|filelists|other)\.xml\.gz$/.test(name) && !keep.has(name)) {
        await rm(join(root, 'repodata', name), { force: true });
      }
    }
  }
}
