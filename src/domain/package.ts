import type { PackageFormat } from './distributions.js';

/** One file a package installs, as listed in its archive. */
export interface PackageFileEntry {
  path: string;
  size: number;
  mode: number;
  type: string;
}

/**
 * A package file as the pipeline sees it, whatever its format: identity, source, file list and
 * the format's own metadata (stored as JSON, used for indexes and SBOMs).
 */
export interface InspectedPackage {
  format: PackageFormat;
  name: string;
  /** deb: the Version field; rpm: `[epoch:]version-release`. */
  version: string;
  arch: string;
  /** The source package the vulnerability matcher looks up (deb `Source`, rpm source RPM name). */
  sourceName: string;
  sourceVersion: string;
  summary: string;
  /** The file name the repository gives it (never the client's). */
  repositoryFilename: string;
  files: PackageFileEntry[];
  metadata: Record<string, unknown>;
  /** Relationship fields (deb Depends/Provides…, rpm requires/provides…) as stored. */
  relations: Record<string, unknown>;
}

/** Size and digests of a stored file. */
export interface FileFacts {
  size: number;
  md5: string;
  sha1: string;
  sha256: string;
  sha512: string;
}
