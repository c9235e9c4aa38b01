/**
 * The lines of a text file, read as they are consumed. `readline`'s async iterator keeps reading
 * its input while the consumer is busy (or gone), so a large file would be buffered whole: the
 * benchmarks that stream a manifest or an entries file must not measure that.
 */
import { createReadStream } from 'node:fs';

export async function* fileLines(path: string): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    const lines = (rest + (chunk as string)).split('\n');
    rest = lines.pop()!;
    for (const line of lines) yield line;
  }
  if (rest) yield rest;
}
