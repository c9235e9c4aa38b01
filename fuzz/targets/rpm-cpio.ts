/** newc cpio archives (an RPM payload once decompressed), fed in chunks whose sizes come from the input. */
import { PackageFormatError } from '../../src/domain/errors.js';
import { readCpioEntries } from '../../src/domain/rpm/cpio.js';
import { asyncTarget, expectOnly, fromArray, invariant } from '../lib/harness.js';

function chunks(data: Buffer): Buffer[] {
  // The last byte picks the chunk size (1..256 bytes), so the reader's buffering is exercised too.
  const size = 1 + (data.at(-1) ?? 0);
  const out: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) out.push(data.subarray(at, at + size));
  return out;
}

export const fuzz = asyncTarget(async (data) => {
  try {
    let entries = 0;
    for await (const { entry, content } of readCpioEntries(fromArray(chunks(data)))) {
      entries += 1;
      // Every other entry is left unread: the reader must skip it by itself.
      if (entries % 2 === 0) continue;
      let size = 0;
      for await (const chunk of content) size += chunk.length;
      invariant(size === entry.size, () => `cpio entry ${entry.name}: read ${size} of ${entry.size} bytes`);
    }
  } catch (error) {
    expectOnly(error, PackageFormatError);
  }
});
