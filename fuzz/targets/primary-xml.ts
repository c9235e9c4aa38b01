/**
 * primary.xml as the import sync reads it: PrimaryReader fed in chunks must give the packages
 * (or the error) it gives for the document in one piece. Input: the XML, a NUL, chunk lengths.
 */
import type { CatalogEntry } from '../../src/domain/imports/catalog.js';
import { PrimaryReader } from '../../src/domain/imports/rpm-metadata.js';
import { PackageFormatError } from '../../src/domain/errors.js';
import { chunked, expectOnly, invariant, splitParts, syncTarget } from '../lib/harness.js';

function read(pieces: string[]): { entries: CatalogEntry[] } | { error: string } {
  const reader = new PrimaryReader();
  const entries: CatalogEntry[] = [];
  try {
    for (const piece of pieces) {
      reader.write(piece);
      entries.push(...reader.take());
    }
    reader.end();
    entries.push(...reader.take());
    return { entries };
  } catch (error) {
    expectOnly(error, PackageFormatError);
    return { error: (error as PackageFormatError).code };
  }
}

export const fuzz = syncTarget((data) => {
  const [xml = Buffer.alloc(0), seed = Buffer.alloc(0)] = splitParts(data, 0, 2);
  const text = xml.toString('utf8');
  const whole = read([text]);
  const pieces = read(chunked(text, seed));
  invariant(JSON.stringify(whole) === JSON.stringify(pieces), () => `whole ${JSON.stringify(whole).slice(0, 300)}, in pieces ${JSON.stringify(pieces).slice(0, 300)}`);
});
