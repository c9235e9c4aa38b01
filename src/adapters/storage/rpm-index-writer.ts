import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Signer } from '../signing/signer.js';
import { writeFileAtomic } from './atomic.js';
import type { Distribution } from '../../domain/distributions.js';
import { RepodataBuilder, type PackageChunks, type Repodata } from '../../domain/repo/rpm/assemble.js';
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
  /** Stored entry → its parsed chunks, for the entries of the last publish (a noarch one shared by every tree). */
  parsed: Map<string, PackageChunks>;
  /** Per architecture tree: its builder, and the entries its published repodata lists. */
  trees: Map<string, TreeState>;
}

interface TreeState {
  builder: RepodataBuilder;
  /** What this writer last wrote in this tree: its entries in order, the signing key, repomd.xml; null before the first. */
  written: { listed: readonly string[]; signer: string; repomd: string } | null;
}

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((e, i) => e === b[i]);

/**
 * Whether the tree at `root` is still what this writer last wrote there, listing `listed`, signed
 * by `signer`: then writing it again would change nothing but its timestamp. The repomd.xml on disk
 * is compared too, since another replica may have published the distribution since.
 */
async function unchanged(tree: TreeState, root: string, listed: readonly string[], signer: string): Promise<boolean> {
  const w = tree.written;
  if (!w || w.signer !== signer || !sameList(w.listed, listed)) return false;
  try {
    return (await readFile(join(root, 'repodata', 'repomd.xml'), 'utf8')) === w.repomd;
  } catch {
    return false;
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
 * The writer lives as long as the service and remembers, per distribution, the parsed entries and
 * the compressed segments of the last publish: publishing after one upload parses one entry and
 * compresses one segment per document instead of the whole repository, and a tree whose entries
 * did not change (another architecture's upload) is not written again.
 */
export class RpmIndexWriter implements IndexWriter {
  private readonly states = new Map<string, DistributionState>();

  constructor(
    private readonly repoDir: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async write(dist: Distribution, entries: readonly IndexEntry[], signer: Signer): Promise<void> {
    const state = this.states.get(dist.codename) ?? { parsed: new Map<string, PackageChunks>(), trees: new Map<string, TreeState>() };
    const parsed = new Map<string, PackageChunks>();
    const chunksOf = (e: string): PackageChunks => {
      const c = parsed.get(e) ?? state.parsed.get(e) ?? (JSON.parse(e) as PackageChunks);
      parsed.set(e, c);
      return c;
    };
    const single = dist.architectures.length === 1;
    const built: { arch: string; root: string; listed: string[]; tree: TreeState; repodata: Repodata }[] = [];
    const trees = new Map<string, TreeState>();
    const timestamp = Math.floor(this.now().getTime() / 1000);
    for (const arch of dist.architectures) {
      // One architecture: every entry (its own arch or noarch) is listed, as before several were allowed.
      const listed = entries.filter((e) => single || e.arch === arch || e.arch === 'noarch').map((e) => e.text);
      const tree = state.trees.get(arch) ?? { builder: new RepodataBuilder(), written: null };
      const root = join(this.repoDir, rpmTreeRoot(dist, arch));
      // Several trees: one whose entries did not change (another architecture's upload) is left as it is.
      if (!single && (await unchanged(tree, root, listed, signer.fingerprint))) {
        for (const e of listed) chunksOf(e);
        trees.set(arch, tree);
        continue;
      }
      const repodata = await tree.builder.build(listed.map(chunksOf), { timestamp });
      built.push({ arch, root, listed, tree, repodata });
    }
    // Only now: a failed build leaves the previous state, which still describes valid chunks.
    for (const b of built) trees.set(b.arch, { builder: b.tree.builder, written: null });
    this.states.delete(dist.codename);
    this.states.set(dist.codename, { parsed, trees });
    while (this.states.size > CACHED_DISTRIBUTIONS) this.states.delete(this.states.keys().next().value!);
    for (const { arch, root, listed, repodata } of built) {
      await Promise.all(repodata.files.map((file) => writeFileAtomic(join(root, file.path), file.data)));
      const signature = await signer.detachedSign(repodata.repomd);
      await writeFileAtomic(join(root, 'repodata', 'repomd.xml.asc'), signature);
      await writeFileAtomic(join(root, 'repodata', 'repomd.xml'), repodata.repomd);
      await this.pruneOldGenerations(root, repodata.files.map((f) => f.path));
      // Skipped next time only once this tree's files are all in place.
      const tree = trees.get(arch);
      if (tree) tree.written = { listed, signer: signer.fingerprint, repomd: repodata.repomd };
    }
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

