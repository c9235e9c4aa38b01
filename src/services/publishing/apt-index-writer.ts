import { join } from 'node:path';
import type { Signer } from '../../adapters/signing/signer.js';
import { publishAptDistribution } from '../../adapters/storage/apt-publisher.js';
import type { Distribution } from '../../domain/distributions.js';
import type { IndexWriter } from './index-writer.js';

/** Writes `apt/dists/<codename>/…` from the stored stanzas (Packages, compressed variants, by-hash, signed Release). */
export class AptIndexWriter implements IndexWriter {
  constructor(private readonly repoDir: string) {}

  async write(dist: Distribution, entries: readonly string[], signer: Signer): Promise<void> {
    await publishAptDistribution({
      repoRoot: join(this.repoDir, 'apt'),
      codename: dist.codename,
      description: `Tollgate ${dist.description}`,
      origin: 'Tollgate',
      label: 'Tollgate',
      component: dist.component ?? 'main',
      architecture: dist.architecture,
      stanzas: entries,
      signer,
    });
  }
}
