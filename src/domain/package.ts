import type { DebRelationFields } from './deb/reader.js';
import type { RpmPackage } from './rpm/package.js';

/** One file a package installs, as listed in its archive. */
export interface PackageFileEntry {
  path: string;
  size: number;
  mode: number;
  type: string;
}

/** What every inspected package has, whatever its format. */
interface InspectedIdentity {
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
  /** `files` is empty for now: the payload is read after admission (a .deb under DEB_PAYLOAD_CHECK=background). */
  filesPending?: boolean;
}

/** One ar member of a .deb with where its data lies, to stream it again from the stored file. */
export type DebMemberRef = { name: string; offset: number; size: number };

/**
 * A .deb's stored metadata. Its JSON is read back by index generation (control), the antivirus
 * and SBOM (members) and the package pages, so keys and their order stay as first stored: the
 * snake_case ones included. A type alias, not an interface, so it stays assignable to
 * `Record<string, unknown>` for readers that only walk the JSON.
 */
export type DebMetadata = {
  /** The control paragraph's fields in file order; the APT stanza is built from them. */
  control: Array<[string, string]>;
  multiArch: string | null;
  members: DebMemberRef[];
  /** Installed-Size in KiB. */
  installed_size: number | null;
  maintainer: string | null;
  homepage: string | null;
  description: string;
  /** A source package (arch `source`): its .dsc's facts and the files it names. Absent for a .deb. */
  source?: DebSourceMetadata;
};

/**
 * What a source package keeps besides its .dsc's fields (stored in `control`): the .dsc's pool
 * file name and the files the .dsc names, with the digests the repository computed from their
 * bytes. They are stored by SHA-256 like any package file and published in the .dsc's pool folder.
 */
export type DebSourceMetadata = {
  dsc: string;
  format: string;
  binaries: string[];
  files: Array<{ name: string; size: number; md5: string; sha1: string; sha256: string; sha512: string }>;
};

/** The deb relationship fields as written (null when absent), with Multi-Arch for other packages' checks. */
export type DebRelations = DebRelationFields & { multiArch: string | null };

/**
 * A .rpm's stored metadata: the whole parsed package, which repodata, the payload readers and the
 * vulnerability matcher (epoch, sourceRpm) read back. Restated as a mapped type, which unlike the
 * `RpmPackage` interface is assignable to `Record<string, unknown>`, as `DebMetadata` is.
 */
export type RpmMetadata = { [K in keyof RpmPackage]: RpmPackage[K] };

/** The rpm dependency kinds other packages' checks and the SBOM read. */
export type RpmRelations = Pick<RpmPackage, 'requires' | 'provides' | 'conflicts' | 'obsoletes' | 'recommends'>;

export interface DebInspected extends InspectedIdentity {
  format: 'deb';
  metadata: DebMetadata;
  relations: DebRelations;
}

export interface RpmInspected extends InspectedIdentity {
  format: 'rpm';
  metadata: RpmMetadata;
  relations: RpmRelations;
}

/**
 * A package file as the pipeline sees it, whatever its format: identity, source, file list and
 * the format's own metadata and relationship fields (both stored as JSON). `format` tells which.
 */
export type InspectedPackage = DebInspected | RpmInspected;

/** Size and digests of a stored file. */
export interface FileFacts {
  size: number;
  md5: string;
  sha1: string;
  sha256: string;
  sha512: string;
}
