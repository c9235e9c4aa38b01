/**
 * Split a top-level JSON array of objects into its elements without parsing the whole document:
 * a large OSV array file is read with one element in memory at a time. Only the structure
 * (brackets, strings, escapes) is tracked here; each element is validated by JSON.parse later.
 */
import { feedMalformed, feedTooLarge } from './bytes.js';

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

/** Yield the raw bytes of each element of a top-level array; elements must be objects/arrays. */
export async function* splitJsonArray(source: AsyncIterable<Buffer>, maxElementBytes: number): AsyncGenerator<Buffer> {
  let started = false;
  let done = false;
  let depth = 0; // 1 = inside the top-level array
  let inString = false;
  let escape = false;
  let parts: Buffer[] = [];
  let partBytes = 0;

  for await (const chunk of source) {
    let segStart = depth >= 2 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i] as number;
      if (inString) {
        if (escape) escape = false;
        else if (c === BACKSLASH) escape = true;
        else if (c === QUOTE) inString = false;
        continue;
      }
      if (done) {
        if (!WS.has(c)) throw feedMalformed('feed_malformed', 'data after the end of the JSON array');
        continue;
      }
      if (!started) {
        if (WS.has(c) || (c === 0xef || c === 0xbb || c === 0xbf)) continue; // whitespace or UTF-8 BOM
        if (c !== 0x5b) throw feedMalformed('feed_malformed', 'expected a JSON array');
        started = true;
        depth = 1;
        continue;
      }
      if (depth === 1) {
        if (WS.has(c) || c === COMMA) continue;
        if (c === 0x5d) {
          done = true;
          depth = 0;
          continue;
        }
        if (c !== 0x7b && c !== 0x5b) throw feedMalformed('feed_malformed', 'JSON array elements must be objects');
        segStart = i;
        depth = 2;
        continue;
      }
      if (c === QUOTE) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        depth--;
        if (depth === 1) {
          const tail = chunk.subarray(segStart, i + 1);
          if (partBytes + tail.length > maxElementBytes) throw feedTooLarge('feed_entry_too_large', `a record exceeds ${maxElementBytes} bytes`);
          parts.push(tail);
          const element = Buffer.concat(parts);
          parts = [];
          partBytes = 0;
          segStart = -1;
          yield element;
        }
      }
    }
    if (depth >= 2 && segStart >= 0) {
      const part = chunk.subarray(segStart);
      partBytes += part.length;
      if (partBytes > maxElementBytes) throw feedTooLarge('feed_entry_too_large', `a record exceeds ${maxElementBytes} bytes`);
      // Copy: the source may reuse its chunk buffers.
      parts.push(Buffer.from(part));
    }
  }
  if (!started) throw feedMalformed('feed_malformed', 'empty feed');
  if (!done) throw feedMalformed('feed_malformed', 'truncated JSON array');
}
