/**
 * The repodata of a repository from per-package chunks. Chunks are computed once per package
 * (the caller stores them), so publishing only joins and compresses stored text: no package is
 * read again. Documents list packages in the order given (the index's: the order they arrived);
 * dnf reads them whole and does not care, and an order that only grows at the end lets a
 * publish append (see gzip-document.ts).
 */
import { filelistsPackageXml } from './filelists.js';
import { DOCUMENT_TYPES, documentXml, GzipXmlDocument, type DocumentType } from './gzip-document.js';
import { DEFAULT_CHANGELOG_LIMIT, otherPackageXml } from './other.js';
import { primaryPackageXml } from './primary.js';
import { repomdXml, type RepomdRecord } from './repomd.js';
import { repoArch, type RepoPackageInput } from './types.js';

/** Which package the chunks describe (stored with them). */
export interface ChunkKey {
  name: string;
  epoch: number | null;
  version: string;
  release: string;
  arch: string;
  location: string;
}

/** The three XML fragments of one package plus which package it is; plain data, safe to store. */
export interface PackageChunks {
  key: ChunkKey;
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

/** The three uncompressed documents. */
export type RepodataDocuments = Record<DocumentType, string>;

/** Joins chunks, in the order given, into primary.xml, filelists.xml and other.xml. */
export function assembleDocuments(chunks: readonly PackageChunks[]): RepodataDocuments {
  const doc = (type: DocumentType) => documentXml(type, chunks.map((c) => c[type]));
  return { primary: doc('primary'), filelists: doc('filelists'), other: doc('other') };
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

/** Where a finished document is published: its name carries its checksum, as createrepo_c names it. */
export const documentHref = (type: DocumentType, checksum: string): string => `repodata/${checksum}-${type}.xml.gz`;

/** The repomd record of a finished document. */
export const repomdRecord = (type: DocumentType, facts: { checksum: string; openChecksum: string; size: number; openSize: number }, timestamp: number): RepomdRecord => ({
  type,
  checksum: facts.checksum,
  openChecksum: facts.openChecksum,
  href: documentHref(type, facts.checksum),
  timestamp,
  size: facts.size,
  openSize: facts.openSize,
});

/**
 * The whole repodata in memory, in one piece per document. `timestamp` (seconds) is used for
 * every record and, unless given, as the revision, so the same input and time give
 * byte-identical output. The service streams instead (rpm-index-writer.ts); this is for small
 * repositories built at once.
 */
export async function buildRepodata(chunks: readonly PackageChunks[], options: { timestamp: number; revision?: string }): Promise<Repodata> {
  const files: RepodataFile[] = [];
  const records: RepomdRecord[] = [];
  for (const type of DOCUMENT_TYPES) {
    const { document, bytes: head } = await GzipXmlDocument.begin(type);
    const body = chunks.length > 0 ? await document.add(chunks.map((c) => c[type]).join('')) : Buffer.alloc(0);
    const { bytes: tail, facts } = await document.finish();
    const record = repomdRecord(type, facts, options.timestamp);
    files.push({ path: record.href, data: Buffer.concat([head, body, tail]) });
    records.push(record);
  }
  return { files, records, repomd: repomdXml(options.revision ?? String(options.timestamp), records) };
}
