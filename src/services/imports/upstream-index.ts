/**
 * Reads one source's signed upstream index into a CatalogWriter: the signed file first
 * (InRelease / Release + Release.gpg, repomd.xml + .asc), then each index it lists, each checked
 * against the signed size and digest before a byte of it is parsed.
 */
import { createHash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { pipeline, type Readable } from 'node:stream';
import { fetchSmall, fetchToFile, upstreamUrl, type FetchLimits } from '../../adapters/upstream/fetcher.js';
import { verifyCleartext, verifyDetached } from '../../adapters/signing/upstream-verify.js';
import { withSystemXz } from '../../adapters/storage/xz.js';
import { createBoundedDecompressor, type Compression } from '../../domain/compression.js';
import { DomainError } from '../../domain/errors.js';
import { packagesCandidates, parseRelease } from '../../domain/imports/apt-release.js';
import { debEntryBatches } from '../../domain/imports/deb822-stream.js';
import { parseRepomd, PrimaryReader } from '../../domain/imports/rpm-metadata.js';
import type { CatalogEntry } from '../../domain/imports/catalog.js';
import type { StoredSource } from './source-store.js';

export interface IndexLimits {
  signed: FetchLimits;
  index: FetchLimits;
  /** Cap on a decompressed index. */
  maxIndexBytes: number;
}

/** The signed index as fetched: its digest decides whether anything changed. */
export interface SignedIndex {
  unchanged304: boolean;
  digest: string;
  etag: string | null;
  lastModified: string | null;
  /** Reads the indexes it lists and hands every package to `add`. */
  read(add: (entry: CatalogEntry) => Promise<void>): Promise<void>;
}

const refused = (code: string, message: string) => new DomainError('invalid', code, message);
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

export async function fetchSignedIndex(
  source: StoredSource,
  validators: { etag: string | null; lastModified: string | null },
  limits: IndexLimits,
  tempDir: string,
): Promise<SignedIndex> {
  return source.type === 'apt' ? aptIndex(source, validators, limits, tempDir) : rpmIndex(source, validators, limits, tempDir);
}

async function aptIndex(source: StoredSource, validators: { etag: string | null; lastModified: string | null }, limits: IndexLimits, tempDir: string): Promise<SignedIndex> {
  const dists = upstreamUrl(source.url!, `dists/${source.suite!}`);
  let text: string;
  let meta: { etag: string | null; lastModified: string | null };
  const inRelease = await fetchSmall(`${dists}/InRelease`, limits.signed, validators);
  if (inRelease.status === 304) return unchanged(validators);
  if (inRelease.status === 200 && source.key) {
    text = await verifyCleartext(inRelease.body.toString('utf8'), source.key);
    meta = inRelease;
  } else {
    const release = await fetchSmall(`${dists}/Release`, limits.signed);
    if (release.status !== 200) throw refused('index_missing', `${source.name}: neither InRelease nor Release found under dists/${source.suite}`);
    if (source.key) {
      const signature = await fetchSmall(`${dists}/Release.gpg`, limits.signed);
      if (signature.status !== 200) throw refused('signature_missing', `${source.name}: the upstream is not signed (no InRelease, no Release.gpg)`);
      await verifyDetached(release.body, signature.body, source.key);
    }
    text = release.body.toString('utf8');
    // Release is always fetched in full here, so no validator applies to the next run.
    meta = { etag: null, lastModified: null };
  }
  const parsed = parseRelease(text);
  // As apt does: a signed Release past its Valid-Until may be an old index replayed to hide updates.
  if (parsed.validUntil !== null) {
    const until = Date.parse(parsed.validUntil);
    if (Number.isNaN(until) || until < Date.now()) throw refused('index_expired', `${source.name}: the signed Release expired (Valid-Until ${parsed.validUntil})`);
  }
  return {
    unchanged304: false,
    digest: sha256(text),
    etag: meta.etag,
    lastModified: meta.lastModified,
    async read(add) {
      for (const component of source.components) {
        for (const arch of source.architectures) {
          const path = packagesCandidates(component, arch).find((p) => parsed.sha256.has(p));
          if (!path) throw refused('index_not_listed', `${source.name}: the signed Release lists no Packages index for ${component}/binary-${arch}`);
          const signed = parsed.sha256.get(path)!;
          await withVerifiedFile(upstreamUrl(dists, path), signed, limits, tempDir, async (stream) => {
            for await (const batch of debEntryBatches(decode(stream))) {
              for (const entry of batch) await add(entry);
            }
          }, compressionOf(path));
        }
      }
    },
  };
}

async function rpmIndex(source: StoredSource, validators: { etag: string | null; lastModified: string | null }, limits: IndexLimits, tempDir: string): Promise<SignedIndex> {
  const base = source.baseurl!;
  const repomdResponse = await fetchSmall(upstreamUrl(base, 'repodata/repomd.xml'), limits.signed, validators);
  if (repomdResponse.status === 304) return unchanged(validators);
  if (repomdResponse.status !== 200) throw refused('index_missing', `${source.name}: no repodata/repomd.xml`);
  if (source.key) {
    const signature = await fetchSmall(upstreamUrl(base, 'repodata/repomd.xml.asc'), limits.signed);
    if (signature.status !== 200) throw refused('signature_missing', `${source.name}: the upstream is not signed (no repomd.xml.asc)`);
    await verifyDetached(repomdResponse.body, signature.body, source.key);
  }
  const repomd = parseRepomd(repomdResponse.body.toString('utf8'));
  const primary = repomd.data.find((d) => d.type === 'primary');
  if (!primary) throw refused('index_not_listed', `${source.name}: repomd.xml lists no primary metadata`);
  if (primary.checksumType !== 'sha256' && primary.checksumType !== 'sha512') {
    throw refused('weak_checksum', `${source.name}: repomd.xml gives primary a ${primary.checksumType} checksum; sha256 or sha512 is required`);
  }
  return {
    unchanged304: false,
    digest: sha256(repomdResponse.body),
    etag: repomdResponse.etag,
    lastModified: repomdResponse.lastModified,
    async read(add) {
      const signed = { size: primary.size, sha256: primary.checksumType === 'sha256' ? primary.checksum : null, sha512: primary.checksumType === 'sha512' ? primary.checksum : null };
      await withVerifiedFile(upstreamUrl(base, primary.location), signed, limits, tempDir, async (stream) => {
        const reader = new PrimaryReader();
        for await (const chunk of decode(stream)) {
          reader.write(chunk);
          for (const entry of reader.take()) await add(entry);
        }
        reader.end();
        for (const entry of reader.take()) await add(entry);
      }, compressionOf(primary.location));
    },
  };
}

function unchanged(validators: { etag: string | null; lastModified: string | null }): SignedIndex {
  return { unchanged304: true, digest: '', etag: validators.etag, lastModified: validators.lastModified, read: async () => undefined };
}

/** Downloads, checks size and digest against the signed values, then streams it decompressed. */
async function withVerifiedFile(
  url: string,
  signed: { size: number | null; sha256?: string | null; sha512?: string | null },
  limits: IndexLimits,
  tempDir: string,
  use: (stream: Readable) => Promise<void>,
  compression: Compression,
): Promise<void> {
  const file = await fetchToFile(url, limits.index, tempDir);
  if (!file) throw refused('index_missing', `${url} is listed in the signed index but not found`);
  try {
    const mismatch = (signed.size !== null && file.size !== signed.size)
      || (signed.sha256 && file.sha256 !== signed.sha256)
      || (signed.sha512 && file.sha512 !== signed.sha512);
    if (mismatch) throw refused('checksum_mismatch', `${url} does not match the size and checksum of the signed index`);
    // An xz index is decoded by the system's xz where it runs: bookworm's main Packages.xz (9 MB)
    // held the event loop ~1 s in liblzma, against ~0.15 s of piping.
    const decompression = withSystemXz({ maxOutputBytes: limits.maxIndexBytes, maxRatio: 200 });
    // pipeline, not pipe: a read error reaches `use` instead of going unhandled.
    const stream = pipeline(file.stream(), createBoundedDecompressor(compression, decompression, file.size), () => undefined);
    await use(stream);
  } finally {
    await file.remove();
  }
}

function compressionOf(path: string): Compression {
  if (path.endsWith('.xz')) return 'xz';
  if (path.endsWith('.gz')) return 'gzip';
  if (path.endsWith('.zst')) return 'zstd';
  if (/\.(bz2|lzma|lz4)$/.test(path)) throw refused('unsupported_compression', `cannot read ${path}: only xz, gzip and zstd indexes are read`);
  return 'none';
}

async function* decode(stream: Readable): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  for await (const chunk of stream) yield decoder.write(chunk as Buffer);
  const rest = decoder.end();
  if (rest) yield rest;
}
