/**
 * Reads a stored package's payload for the inventory: the deb's data.tar (bounded decompression,
 * as the upload reader does) or the RPM's cpio payload, handing each interesting file to the
 * domain collector. Files are streamed; only metadata-sized files and jars are held whole.
 */
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import tarStream from 'tar-stream';
import { withSystemXz } from '../../adapters/storage/xz.js';
import { createBoundedDecompressor, type Compression } from '../../domain/compression.js';
import { openArMember } from '../../domain/deb/reader.js';
import { DEFAULT_PAYLOAD_LIMITS, iterateRpmPayload } from '../../domain/rpm/payload.js';
import type { RpmPackage } from '../../domain/rpm/package.js';
import { classify, InventoryCollector } from '../../domain/sbom/inner/index.js';
import type { PackageInventory } from '../../domain/sbom/model.js';

/** Same caps as the upload reader (src/domain/deb/reader.ts): the file was accepted under them. */
const DEB_LIMITS = { maxOutputBytes: 16 * 1024 ** 3, maxRatio: 1000 };

interface StoredPackage {
  format: string;
  name: string;
  metadata: Record<string, unknown>;
}

async function feed(collector: InventoryCollector, path: string, mode: number, size: number, name: string, content: AsyncIterable<Buffer>): Promise<void> {
  const interest = classify(path, mode, size, name);
  if (!interest) return;
  if (interest.mode === 'stream') {
    const scanner = collector.executable();
    // Drained to the end even when the scanner is done: abandoning a tar entry stream mid-way
    // would tear down the archive walk.
    for await (const chunk of content) if (scanner.wanted) scanner.push(chunk);
    collector.finishExecutable(path, scanner);
    return;
  }
  let chunks: Buffer[] | null = [];
  let length = 0;
  for await (const chunk of content) {
    length += chunk.length;
    if (length > interest.maxBytes) chunks = null;
    chunks?.push(chunk);
  }
  if (chunks) collector.whole(interest.kind, path, Buffer.concat(chunks, length));
}

const compressionOf = (member: string): Compression =>
  member.endsWith('.gz') ? 'gzip' : member.endsWith('.xz') ? 'xz' : member.endsWith('.zst') ? 'zstd' : 'none';

async function walkDeb(file: string, pkg: StoredPackage, collector: InventoryCollector): Promise<void> {
  const members = (pkg.metadata.members ?? []) as Array<{ name: string; offset: number; size: number }>;
  const data = members.find((m) => m.name.startsWith('data.tar'));
  if (!data) throw new Error('no data.tar member recorded');
  const extract = tarStream.extract();
  // liblzma in-process would hold the event loop for the whole payload (seconds for a large one).
  const done = pipeline(openArMember(file, data) as Readable, createBoundedDecompressor(compressionOf(data.name), withSystemXz(DEB_LIMITS), data.size), extract);
  // Awaited after the loop; when the loop fails first (a corrupt tar) it rejects too, and an
  // unhandled rejection would stop the process.
  done.catch(() => undefined);
  for await (const entry of extract) {
    const header = entry.header;
    const installPath = `/${header.name.replace(/^\.?\/+/, '')}`;
    if (header.type === 'file' || header.type === 'contiguous-file') {
      await feed(collector, installPath, 0o100000 | (header.mode ?? 0), header.size ?? 0, pkg.name, entry as AsyncIterable<Buffer>);
    }
    entry.resume();
  }
  await done;
}

async function walkRpm(file: string, pkg: StoredPackage, collector: InventoryCollector): Promise<void> {
  for await (const { entry, content } of iterateRpmPayload(file, pkg.metadata as unknown as RpmPackage, withSystemXz(DEFAULT_PAYLOAD_LIMITS))) {
    if (entry.isFile) await feed(collector, entry.name, entry.mode, entry.size, pkg.name, content);
  }
}

/** The inventory of the package file at `file`; a payload that cannot be read gives an inventory saying why. */
export async function catalogue(file: string, pkg: StoredPackage): Promise<PackageInventory> {
  const collector = new InventoryCollector();
  try {
    if (pkg.format === 'rpm') await walkRpm(file, pkg, collector);
    // A source package (.dsc) installs nothing: it has no payload to catalogue.
    else if ((pkg.metadata as { source?: unknown }).source) return collector.result();
    else await walkDeb(file, pkg, collector);
    return collector.result();
  } catch (error) {
    return collector.result(`payload not fully read: ${error instanceof Error ? error.message : String(error)}`);
  }
}
