import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Signer } from '../../adapters/signing/signer.js';
import { writeFileAtomic } from '../../adapters/storage/atomic.js';
import type { Distribution } from '../../domain/distributions.js';
import { buildRepodata, type PackageChunks } from '../../domain/repo/rpm/assemble.js';
import { rpmTreeRoot } from '../formats/rpm.js';
import type { IndexWriter } from './index-writer.js';

/** How many earlier repodata generations stay on disk for clients still reading them. */
const KEEP_GENERATIONS = 3;
const HISTORY_FILE = '.generations.json';

/**
 * repodata for one RPM distribution. The data files have content-addressed names, so a new
 * generation is written beside the old one; repomd.xml.asc and repomd.xml are renamed into place
 * last, and the files of the previous generations are removed only once they are several
 * generations old, so a client that read an earlier repomd.xml still finds what it names.
 */
export class RpmIndexWriter implements IndexWriter {
  constructor(
    private readonly repoDir: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async write(dist: Distribution, entries: readonly string[], signer: Signer): Promise<void> {
    const root = join(this.repoDir, rpmTreeRoot(dist));
    const chunks = entries.map((e) => JSON.parse(e) as PackageChunks);
    const repodata = await buildRepodata(chunks, { timestamp: Math.floor(this.now().getTime() / 1000) });
    for (const file of repodata.files) await writeFileAtomic(join(root, file.path), file.data);
    const signature = await signer.detachedSign(repodata.repomd);
    await writeFileAtomic(join(root, 'repodata', 'repomd.xml.asc'), signature);
    await writeFileAtomic(join(root, 'repodata', 'repomd.xml'), repodata.repomd);
    await this.pruneOldGenerations(root, repodata.files.map((f) => f.path));
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
