import { join } from 'node:path';
import type { Signer } from '../signing/signer.js';
import { appendAptDistribution, publishAptDistribution, type AptIndexState, type AptPublishOptions } from './apt-publisher.js';
import type { Distribution } from '../../domain/distributions.js';
import type { IndexWriter } from './interfaces.js';

/** Writes `apt/dists/<codename>/…` from the stored stanzas (Packages, compressed variants, by-hash, signed Release). */
export class AptIndexWriter implements IndexWriter {
  private readonly states = new Map<string, AptIndexState>();

  constructor(
    private readonly repoDir: string,
    private readonly sync = true,
  ) {}

  private options(dist: Distribution, stanzas: readonly string[], signer: Signer): AptPublishOptions {
    return {
      repoRoot: join(this.repoDir, 'apt'),
      codename: dist.codename,
      description: `Tollgate ${dist.description}`,
      origin: 'Tollgate',
      label: 'Tollgate',
      component: dist.component ?? 'main',
      architecture: dist.architecture,
      stanzas,
      signer,
      sync: this.sync,
    };
  }

  async write(dist: Distribution, entries: readonly string[], signer: Signer): Promise<void> {
    this.states.delete(dist.codename);
    const result = await publishAptDistribution(this.options(dist, entries, signer));
    this.states.set(dist.codename, result.state);
  }

  async writeBatches(dist: Distribution, batches: AsyncIterable<readonly string[]>, signer: Signer): Promise<void> {
    this.states.delete(dist.codename);
    const result = await publishAptDistribution({ ...this.options(dist, [], signer), batches });
    this.states.set(dist.codename, result.state);
  }

  async append(dist: Distribution, entries: readonly string[], signer: Signer): Promise<boolean> {
    const previous = this.states.get(dist.codename);
    if (!previous) return false;
    this.states.delete(dist.codename);
    const result = await appendAptDistribution({ ...this.options(dist, entries, signer), previous });
    if (!result) return false;
    this.states.set(dist.codename, result.state);
    return true;
  }

  forget(codename: string): void {
    this.states.delete(codename);
  }
}
