/**
 * repomd.xml: the index of the repodata files, with checksums of each file compressed (what
 * clients download) and uncompressed (open-checksum), as createrepo_c writes it.
 */
import { attrs, escapeText } from './xml.js';

/** One `<data>` record. */
export interface RepomdRecord {
  /** `primary`, `filelists`, `other`, or any extra type (e.g. `updateinfo`). */
  type: string;
  /** SHA-256 of the file as stored (compressed). */
  checksum: string;
  /** SHA-256 of the uncompressed content. */
  openChecksum: string;
  /** Location relative to the repository root, e.g. `repodata/<sha>-primary.xml.gz`. */
  href: string;
  /** Seconds since the epoch. */
  timestamp: number;
  size: number;
  openSize: number;
}

/** The whole repomd.xml document (newline-terminated). */
export function repomdXml(revision: string, records: readonly RepomdRecord[]): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<repomd xmlns="http://linux.duke.edu/metadata/repo" xmlns:rpm="http://linux.duke.edu/metadata/rpm">',
    `  <revision>${escapeText(revision)}</revision>`,
  ];
  for (const r of records) {
    lines.push(
      `  <data${attrs([['type', r.type]])}>`,
      `    <checksum type="sha256">${escapeText(r.checksum)}</checksum>`,
      `    <open-checksum type="sha256">${escapeText(r.openChecksum)}</open-checksum>`,
      `    <location${attrs([['href', r.href]])}/>`,
      `    <timestamp>${r.timestamp}</timestamp>`,
      `    <size>${r.size}</size>`,
      `    <open-size>${r.openSize}</open-size>`,
      '  </data>',
    );
  }
  lines.push('</repomd>');
  return lines.join('\n') + '\n';
}
