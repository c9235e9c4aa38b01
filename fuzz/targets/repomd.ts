/** repomd.xml: parseRepomd through the streaming XML tokenizer. */
import { PackageFormatError } from '../../src/domain/errors.js';
import { parseRepomd } from '../../src/domain/imports/rpm-metadata.js';
import { expectOnly, invariant, syncTarget } from '../lib/harness.js';

export const fuzz = syncTarget((data) => {
  try {
    const repomd = parseRepomd(data.toString('utf8'));
    for (const entry of repomd.data) {
      invariant(entry.size === null || Number.isSafeInteger(entry.size), () => `size ${entry.size}`);
    }
  } catch (error) {
    expectOnly(error, PackageFormatError);
  }
});
