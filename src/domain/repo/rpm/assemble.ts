/**
 * The repodata of a repository from per-package chunks. Chunks are computed once per package
 * (the caller stores them), so publishing only joins and compresses stored text: no package is
 * read again. Documents list packages in the order given (the index's: the order they arrived);
 * dnf reads them whole and does not care, and an order that only grows at the end lets a
 * publish append (see gzip-document.ts).
 */
import { filelistsPackageXml } from './filelists.js';
import { documentXml, type DocumentFacts, type DocumentType } from './gzip-document.js';
import { DEFAULT_CHANGELOG_LIMIT, otherPackageXml } from './other.js';
import { primaryPackageXml } from './primary.js';
import type { RepomdRecord } from './repomd.js';
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

/** Where a finished document is published: its name carries its checksum, as createrepo_c names it. */
export const documentHref = (type: DocumentType, checksum: string): string => `repodata/${checksum}-${type}.xml.gz`;

/** The repomd record of a finished document. */
export const repomdRecord = (type: DocumentType, facts: DocumentFacts, timestamp: number): RepomdRecord => ({
  type,
  checksum: facts.checksum,
  openChecksum: facts.openChecksum,
  href: documentHref(type, facts.checksum),
  timestamp,
  size: facts.size,
  openSize: facts.openSize,
});
