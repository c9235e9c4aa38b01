import type { Signer } from '../../adapters/signing/signer.js';
import type { Distribution } from '../../domain/distributions.js';

/** Writes one distribution's signed index from the stored per-package entries, atomically. */
export interface IndexWriter {
  write(dist: Distribution, entries: readonly string[], signer: Signer): Promise<void>;
}
