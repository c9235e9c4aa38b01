import { join } from 'node:path';
import type { Signer } from '../signing/signer.js';
import { appendAptDistribution, aptPublishingSettled, publishAptDistribution, type AptDistributionState, type AptEntry, type AptPublishOptions } from './apt-publisher.js';
import type { Distribution } from '../../domain/distributions.js';
import type { PackageFileEntry } from '../../domain/package.js';
import { contentsLines } from '../../domain/repo/apt/contents.js';
import type { IndexEntry, IndexWriter } from './interfaces.js';
import { SpareCopies } from './spare-copies.js';

function contentsOf(e: IndexEntry): string {
  if (!e.contents) return '';
  try {
    return contentsLines(e.contents.name, JSON.parse(e.contents.files) as PackageFileEntry[]);
  } catch {
    // A row whose file list cannot be read still gets its stanza; only apt-file misses it.
    return '';
  }
}

const aptEntry = (e: IndexEntry): AptEntry => ({ component: e.component, arch: e.arch, stanza: e.text, contents: contentsOf(e), ...(e.contentsOnly ? { contentsOnly: true } : {}) });

async function* aptBatches(batches: AsyncIterable<readonly IndexEntry[]>): AsyncGenerator<AptEntry[]> {
  for await (const batch of batches) yield batch.map(aptEntry);
}

/** Writes `apt/dists/<codename>/…` from the stored stanzas (Packages per component and architecture, compressed variants, by-hash, signed Release). */
export class AptIndexWriter implements IndexWriter {
  private readonly states = new Map<string, AptDistributionState>();
  private readonly spares = new SpareCopies();

  constructor(
    private readonly repoDir: string,
    private readonly sync = true,
    /** Told of a failed by-hash pruning (it runs after a publish has answered). */
    private readonly onCleanUpError?: (error: unknown) => void,
  ) {}

  private options(dist: Distribution, signer: Signer): AptPublishOptions {
    return {
      repoRoot: join(this.repoDir, 'apt'),
      codename: dist.codename,
      description: `Tollgate ${dist.description}`,
      origin: dist.origin,
      label: dist.label,
      suite: dist.suite,
      components: dist.components,
      architectures: dist.architectures,
      signer,
      sync: this.sync,
      spares: this.spares,
      ...(this.onCleanUpError ? { onCleanUpError: this.onCleanUpError } : {}),
    };
  }

  async write(dist: Distribution, entries: readonly IndexEntry[], signer: Signer): Promise<void> {
    this.states.delete(dist.codename);
    const result = await publishAptDistribution({ ...this.options(dist, signer), entries: entries.map(aptEntry) });
    this.states.set(dist.codename, result.state);
  }

  async writeBatches(dist: Distribution, batches: AsyncIterable<readonly IndexEntry[]>, signer: Signer): Promise<void> {
    this.states.delete(dist.codename);
    const result = await publishAptDistribution({ ...this.options(dist, signer), batches: aptBatches(batches) });
    this.states.set(dist.codename, result.state);
  }

  async append(dist: Distribution, entries: readonly IndexEntry[], signer: Signer): Promise<boolean> {
    const previous = this.states.get(dist.codename);
    if (!previous) return false;
    this.states.delete(dist.codename);
    const result = await appendAptDistribution({ ...this.options(dist, signer), entries: entries.map(aptEntry), previous });
    if (!result) return false;
    this.states.set(dist.codename, result.state);
    return true;
  }

  forget(codename: string): void {
    this.states.delete(codename);
    this.spares.discardUnder(join(this.repoDir, 'apt', 'dists', codename, '/'));
  }

  settled(codename: string): Promise<void> {
    return aptPublishingSettled(join(this.repoDir, 'apt'), codename);
  }

  idle(): Promise<void> {
    return this.spares.settled();
  }

  stop(): void {
    this.spares.close();
  }
}
