/**
 * Builds the repodata of a repository from per-package chunks. Chunks are computed once per
 * package (and may be stored by the caller), so publishing after adding one package only
 * concatenates strings: no other package is read again.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { compareEvr } from '../../rpm/vercmp.js';
import { filelistsPackageXml } from './filelists.js';
import { DEFAULT_CHANGELOG_LIMIT, otherPackageXml } from './other.js';
import { primaryPackageXml } from './primary.js';
import { repomdXml, type RepomdRecord } from './repomd.js';
import { repoArch, type RepoPackageInput } from './types.js';

const gzipAsync = promisify(gzip);

/** What sorts a package in the documents. */
export interface ChunkSortKey {
  name: string;
  epoch: number | null;
  version: string;
  release: string;
  arch: string;
  location: string;
}

/** The three XML fragments of one package plus its sort key; plain data, safe to store. */
export interface PackageChunks {
  key: ChunkSortKey;
  primary: string;
  filelists: string;
  other: string;
}

/** Computes the chunks of one package. */
export function packageChunks(input: RepoPackageInput, changelogLimit = DEFAULT_CHANGELOG_LIMIT): PackageChunks {
  const { pkg } = input;
  return {
    key: {
      name: pkg.name,
      epoch: pkg.epoch,
      version: pkg.version,
      release: pkg.release,
      arch: repoArch(pkg),
      location: input.locationHref,
    },
    primary: primaryPackageXml(input),
    filelists: filelistsPackageXml(input),
    other: otherPackageXml(input, changelogLimit),
  };
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Deterministic order: name, then EVR (rpm order), then arch, then location. */
export function compareChunkKeys(a: ChunkSortKey, b: ChunkSortKey): number {
  return (
    byCodeUnits(a.name, b.name) ||
    compareEvr(a, b) ||
    byCodeUnits(a.arch, b.arch) ||
    byCodeUnits(a.location, b.location)
  );
}

/** The three uncompressed documents. */
export interface RepodataDocuments {
  primary: string;
  filelists: string;
  other: string;
}

/** Joins chunks (in sorted order) into primary.xml, filelists.xml and other.xml. */
export function assembleDocuments(chunks: readonly PackageChunks[]): RepodataDocuments {
  const sorted = [...chunks].sort((a, b) => compareChunkKeys(a.key, b.key));
  const n = sorted.length;
  const head = '<?xml version="1.0" encoding="UTF-8"?>\n';
  return {
    primary:
      `${head}<metadata xmlns="http://linux.duke.edu/metadata/common" xmlns:rpm="http://linux.duke.edu/metadata/rpm" packages="${n}">\n` +
      sorted.map((c) => c.primary).join('') +
      '</metadata>',
    filelists:
      `${head}<filelists xmlns="http://linux.duke.edu/metadata/filelists" packages="${n}">\n` +
      sorted.map((c) => c.filelists).join('') +
      '</filelists>',
    other:
      `${head}<otherdata xmlns="http://linux.duke.edu/metadata/other" packages="${n}">\n` +
      sorted.map((c) => c.other).join('') +
      '</otherdata>',
  };
}

/** One file to write under the repository root. */
export interface RepodataFile {
  /** Relative path, e.g. `repodata/<sha256>-primary.xml.gz`. */
  path: string;
  data: Buffer;
}

/** Everything to publish: the compressed documents and repomd.xml (to sign and write last). */
export interface Repodata {
  files: RepodataFile[];
  repomd: string;
  records: RepomdRecord[];
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * Gzips the documents and writes repomd.xml. `timestamp` (seconds) is used for every record and,
 * unless given, as the revision, so the same input and time give byte-identical output.
 */
export async function buildRepodata(
  chunks: readonly PackageChunks[],
  options: { timestamp: number; revision?: string },
): Promise<Repodata> {
  const docs = assembleDocuments(chunks);
  const files: RepodataFile[] = [];
  const records: RepomdRecord[] = [];
  for (const type of ['primary', 'filelists', 'other'] as const) {
    const open = Buffer.from(docs[type], 'utf8');
    const data = await gzipAsync(open, { level: 9 });
    const checksum = sha256(data);
    const path = `repodata/${checksum}-${type}.xml.gz`;
    files.push({ path, data });
    records.push({
      type,
      checksum,
      openChecksum: sha256(open),
      href: path,
      timestamp: options.timestamp,
      size: data.length,
      openSize: open.length,
    });
  }
  return { files, records, repomd: repomdXml(options.revision ?? String(options.timestamp), records) };
}
