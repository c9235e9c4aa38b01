import type { Readable } from 'node:stream';
import type { KnownBytes } from '../../domain/known-bytes.js';
import type { Distribution } from '../../domain/distributions.js';
import type { FileFacts, InspectedPackage } from '../../domain/package.js';

/** One thing to hand to the antivirus: an ar member, a decompressed payload. */
export interface ScanUnit {
  name: string;
  open(): Readable;
}

/** A name this package answers to in dependency checks (itself, a Provides, a file). */
export interface ProvideRow {
  kind: 'package' | 'provides' | 'file';
  name: string;
  version: string | null;
  flags: number | null;
}

export interface DependencyReport {
  all_satisfied: boolean;
  missing: Array<{ relation: string; reason: string }>;
  install_blocked: boolean;
}

/** Looks up, among the packages a distribution publishes, the rows answering to some names. */
export type ProvidesLookup = (names: readonly string[]) => Promise<Array<ProvideRow & { package: string; packageVersion: string; arch: string; multiArch: string | null }>>;

export interface InspectOptions {
  deferPayload?: boolean;
  /** The file's size and first bytes, when the caller holds them (an upload just received): fewer reads of the file. */
  known?: KnownBytes;
}

/**
 * What differs between .deb and .rpm, behind one interface: reading a file, where it goes in the
 * published tree, its index entry, what the antivirus scans, and dependency checks. Each handler
 * is written against its own format's package (`FormatHandler<DebInspected>`); callers hold the
 * default, which takes any package, and pick the handler by the package's or distribution's format.
 */
export interface FormatHandler<P extends InspectedPackage = InspectedPackage> {
  format: P['format'];
  /**
   * Parses and validates the file; throws PackageFormatError with a reason code. `deferPayload`:
   * a format whose file list needs its whole payload decompressed (deb) leaves it for later and
   * says so with `filesPending`.
   */
  inspect(path: string, options?: InspectOptions): Promise<P>;
  /**
   * Path of the published file, relative to the repository root (DATA_DIR/repo). `rewritten` is
   * the SHA-256 of a file the repository changed (an RPM it signed): such a file gets a path of
   * its own, so a path never serves two different files (a re-signed copy, a concurrent upload's).
   */
  poolPath(pkg: P, dist: Distribution, component: string, rewritten: string | null): string;
  /** The package's index text, computed once and stored (APT stanza, RPM repodata chunks). */
  indexEntry(pkg: P, facts: FileFacts, poolPath: string, fileTime: number): string;
  /** The index entry of the same file published at another path (promotion to another distribution). */
  relocateIndexEntry(entry: string, fromPoolPath: string, toPoolPath: string): string;
  /** `sourceFiles`: for a source package, where each file its .dsc names is (by name). */
  scanUnits(path: string, pkg: P, sourceFiles?: ReadonlyMap<string, string>): ScanUnit[];
  /** Names the package answers to, stored for other packages' dependency checks. */
  provides(pkg: P): ProvideRow[];
  checkDependencies(pkg: P, lookup: ProvidesLookup, dist: Distribution): Promise<DependencyReport>;
}
