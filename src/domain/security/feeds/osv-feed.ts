/**
 * Read an OSV feed file (a `vuln_feeds` entry with `format: "osv"`) into advisory rows, one record at a time:
 * a zip of OSV JSON files (osv.dev's `all.zip`), a JSON array of records, or a single record;
 * the JSON forms may be gzipped. Entry count, per-record size and total decompressed size are
 * capped. A record that is not valid JSON or not an OSV record is skipped and counted, so one bad
 * file does not discard a whole feed; a cap that is passed stops the read with a DomainError.
 */
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { DomainError } from '../../errors.js';
import { normalizeOsvRecord } from '../osv.js';
import type { AdvisoryRow } from '../types.js';
import { feedMalformed, feedTooLarge, isZip, readFileBounded, readMagic } from './bytes.js';
import { splitJsonArray } from './json-array.js';

/** Caps of one feed read. */
export interface OsvFeedLimits {
  /** Entries in a zip (central directory count). */
  maxEntries: number;
  /** Bytes of one record (one zip entry or array element), decompressed. */
  maxEntryBytes: number;
  /** Bytes of the whole feed, decompressed. */
  maxTotalBytes: number;
}

/** Defaults sized for osv.dev ecosystem archives (Debian/Ubuntu: ~10⁵ records, ~1 GiB). */
export const DEFAULT_OSV_FEED_LIMITS: OsvFeedLimits = {
  maxEntries: 1_000_000,
  maxEntryBytes: 16 * 1024 * 1024,
  maxTotalBytes: 4 * 1024 * 1024 * 1024,
};

/** Counters filled in while reading. */
export interface OsvFeedStats {
  records: number;
  rows: number;
  withdrawn: number;
  skipped: number;
  /** First few skip reasons, `<entry>: <reason>`, for the sync log. */
  skip_samples: string[];
}

/** A fresh stats object. */
export function newOsvFeedStats(): OsvFeedStats {
  return { records: 0, rows: 0, withdrawn: 0, skipped: 0, skip_samples: [] };
}

const MAX_SKIP_SAMPLES = 20;

function* rowsOf(raw: Buffer, where: string, stats: OsvFeedStats): Generator<AdvisoryRow> {
  stats.records++;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    skip(stats, where, 'invalid JSON');
    return;
  }
  const result = normalizeOsvRecord(parsed);
  if (result.skipped === 'withdrawn') {
    stats.withdrawn++;
    return;
  }
  if (result.skipped !== null) {
    skip(stats, where, result.skipped);
    return;
  }
  stats.rows += result.rows.length;
  yield* result.rows;
}

function skip(stats: OsvFeedStats, where: string, reason: string): void {
  stats.skipped++;
  if (stats.skip_samples.length < MAX_SKIP_SAMPLES) stats.skip_samples.push(`${where}: ${reason}`);
}

/** Read every advisory row of an OSV feed file. */
export async function* readOsvFeed(
  path: string,
  limits: Partial<OsvFeedLimits> = {},
  stats: OsvFeedStats = newOsvFeedStats(),
): AsyncGenerator<AdvisoryRow> {
  const caps = { ...DEFAULT_OSV_FEED_LIMITS, ...limits };
  if (isZip(await readMagic(path, 4))) {
    yield* readOsvZip(path, caps, stats);
    return;
  }
  yield* readOsvJson(path, caps, stats);
}

/** A JSON array of records, or one record (optionally gzipped). */
async function* readOsvJson(path: string, caps: OsvFeedLimits, stats: OsvFeedStats): AsyncGenerator<AdvisoryRow> {
  const source = readFileBounded(path, caps.maxTotalBytes, 'feed_too_large');
  try {
    yield* osvJsonRows(source, caps, stats);
  } finally {
    // An early refusal (empty, neither array nor object) never drains the reader: close its file.
    await source.return(undefined);
  }
}

async function* osvJsonRows(source: AsyncGenerator<Buffer>, caps: OsvFeedLimits, stats: OsvFeedStats): AsyncGenerator<AdvisoryRow> {
  // Peek at the first meaningful byte to choose between an array and a single object.
  const first = await source.next();
  if (first.done) throw feedMalformed('feed_malformed', 'empty feed');
  const head = first.value;
  const firstByte = head.find((b) => b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0xef && b !== 0xbb && b !== 0xbf);
  async function* replay(): AsyncGenerator<Buffer> {
    yield head;
    yield* source;
  }
  if (firstByte === 0x5b) {
    let index = 0;
    for await (const element of splitJsonArray(replay(), caps.maxEntryBytes)) {
      yield* rowsOf(element, `[${index++}]`, stats);
    }
    return;
  }
  if (firstByte !== 0x7b) throw feedMalformed('feed_malformed', 'feed is neither a zip, a JSON array nor a JSON object');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of replay()) {
    size += chunk.length;
    if (size > caps.maxEntryBytes) throw feedTooLarge('feed_entry_too_large', `a record exceeds ${caps.maxEntryBytes} bytes`);
    chunks.push(chunk);
  }
  yield* rowsOf(Buffer.concat(chunks), 'record', stats);
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: true, validateEntrySizes: true, strictFileNames: false }, (err, zip) => {
      if (err || !zip) reject(feedMalformed('feed_malformed', `not a readable zip: ${err?.message ?? 'unknown error'}`));
      else resolve(zip);
    });
  });
}

/** Entries of a lazily read zip, one at a time. */
async function* zipEntries(zip: yauzl.ZipFile): AsyncGenerator<yauzl.Entry> {
  let waiter: { resolve: (e: yauzl.Entry | null) => void; reject: (err: Error) => void } | null = null;
  let failure: Error | null = null;
  zip.on('entry', (entry: yauzl.Entry) => waiter?.resolve(entry));
  zip.on('end', () => waiter?.resolve(null));
  // yauzl reports a damaged archive (a truncated entry list, a bad offset) as a plain Error.
  zip.on('error', (err: Error) => {
    failure = feedMalformed('feed_malformed', `not a readable zip: ${err.message}`);
    waiter?.reject(failure);
  });
  for (;;) {
    if (failure) throw failure;
    const next = new Promise<yauzl.Entry | null>((resolve, reject) => {
      waiter = { resolve, reject };
    });
    zip.readEntry();
    const entry = await next;
    if (!entry) return;
    yield entry;
  }
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err || !stream) reject(err ?? new Error('no stream'));
      else resolve(stream);
    });
  });
}

async function* readOsvZip(path: string, caps: OsvFeedLimits, stats: OsvFeedStats): AsyncGenerator<AdvisoryRow> {
  const zip = await openZip(path);
  try {
    if (zip.entryCount > caps.maxEntries) {
      throw feedTooLarge('feed_too_many_entries', `zip has ${zip.entryCount} entries, more than ${caps.maxEntries}`);
    }
    let total = 0;
    for await (const entry of zipEntries(zip)) {
      const name = entry.fileName;
      if (name.endsWith('/') || !name.toLowerCase().endsWith('.json')) continue;
      // The header size is checked first (cheap); the stream is counted too, since headers lie.
      if (entry.uncompressedSize > caps.maxEntryBytes) {
        throw feedTooLarge('feed_entry_too_large', `${name} is ${entry.uncompressedSize} bytes, more than ${caps.maxEntryBytes}`);
      }
      let stream: Readable;
      try {
        stream = await openEntry(zip, entry);
      } catch (err) {
        throw feedMalformed('feed_malformed', `cannot read ${name}: ${err instanceof Error ? err.message : String(err)}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          size += chunk.length;
          total += chunk.length;
          if (size > caps.maxEntryBytes) throw feedTooLarge('feed_entry_too_large', `${name} exceeds ${caps.maxEntryBytes} bytes`);
          if (total > caps.maxTotalBytes) throw feedTooLarge('feed_too_large', `feed exceeds ${caps.maxTotalBytes} bytes`);
          chunks.push(chunk);
        }
      } catch (err) {
        stream.destroy();
        if (err instanceof DomainError) throw err;
        throw feedMalformed('feed_malformed', `cannot read ${name}: ${err instanceof Error ? err.message : String(err)}`);
      }
      yield* rowsOf(Buffer.concat(chunks), name, stats);
    }
  } finally {
    zip.close();
  }
}
