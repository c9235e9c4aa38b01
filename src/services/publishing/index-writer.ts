import type { Signer } from '../../adapters/signing/signer.js';
import type { Distribution } from '../../domain/distributions.js';

/** Writes one distribution's signed index from the stored per-package entries, atomically. */
export interface IndexWriter {
  /** Writes the whole index from every entry. */
  write(dist: Distribution, entries: readonly string[], signer: Signer): Promise<void>;
  /** Same, reading the entries in batches as it writes them (memory stays flat however many). */
  writeBatches?(dist: Distribution, batches: AsyncIterable<readonly string[]>, signer: Signer): Promise<void>;
  /**
   * Adds entries to the index this writer last wrote for the distribution; false when it cannot
   * (nothing written by this process yet, files changed underneath), and the caller writes in full.
   */
  append?(dist: Distribution, entries: readonly string[], signer: Signer): Promise<boolean>;
  /** Drops what the writer remembers of a distribution (another process published it). */
  forget?(codename: string): void;
}
