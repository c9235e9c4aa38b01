/**
 * Packages indexes as the import sync reads them: debEntryBatches (the fast reader that cuts the
 * catalog fields out of the text) must give the entries, or the first error, that the paragraph
 * parser gives one paragraph at a time (lines + stanzas + debEntry), whatever the chunking; so
 * must stanzaBatches, except that it parses a chunk's paragraphs before debEntry sees the first
 * (so its error may be a later paragraph's). Input: the index text, a NUL, the chunk lengths.
 */
import type { CatalogEntry } from '../../src/domain/imports/catalog.js';
import { debEntry, debEntryBatches, lines, stanzaBatches, stanzas } from '../../src/domain/imports/deb822-stream.js';
import { PackageFormatError } from '../../src/domain/errors.js';
import { asyncTarget, chunked, expectOnly, fromArray, invariant, splitParts } from '../lib/harness.js';

type Outcome = { entries: CatalogEntry[] } | { error: string };

async function read(run: () => Promise<CatalogEntry[]>): Promise<Outcome> {
  try {
    return { entries: await run() };
  } catch (error) {
    expectOnly(error, PackageFormatError);
    return { error: (error as PackageFormatError).code };
  }
}

export const fuzz = asyncTarget(async (data) => {
  const [textBytes = Buffer.alloc(0), seed = Buffer.alloc(0)] = splitParts(data, 0, 2);
  const text = textBytes.toString('utf8');
  const pieces = chunked(text, seed);
  const fast = await read(async () => {
    const out: CatalogEntry[] = [];
    for await (const batch of debEntryBatches(fromArray(pieces))) out.push(...batch);
    return out;
  });
  const batched = await read(async () => {
    const out: CatalogEntry[] = [];
    for await (const batch of stanzaBatches(fromArray(pieces))) out.push(...batch.map(debEntry));
    return out;
  });
  const byLine = await read(async () => {
    const out: CatalogEntry[] = [];
    for await (const stanza of stanzas(lines(fromArray(pieces)))) out.push(debEntry(stanza));
    return out;
  });
  invariant(JSON.stringify(fast) === JSON.stringify(byLine), () => `debEntryBatches ${JSON.stringify(fast).slice(0, 300)} but paragraph by paragraph ${JSON.stringify(byLine).slice(0, 300)}`);
  invariant(
    'error' in batched ? 'error' in byLine : JSON.stringify(batched) === JSON.stringify(byLine),
    () => `stanzaBatches ${JSON.stringify(batched).slice(0, 300)} but paragraph by paragraph ${JSON.stringify(byLine).slice(0, 300)}`,
  );
});
