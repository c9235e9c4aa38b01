/**
 * Input shared by the repodata chunk builders: a parsed package plus what only the caller knows
 * (the file's checksum, where it is published, its modification time).
 */
import type { RpmPackage } from '../../rpm/package.js';

/** One package as it will appear in the repository. */
export interface RepoPackageInput {
  pkg: RpmPackage;
  /** SHA-256 (hex) of the whole .rpm file: the package id in all three documents. */
  checksum: string;
  /** Path relative to the repository root, e.g. `Packages/h/hello-1.0-1.x86_64.rpm`. */
  locationHref: string;
  /** Modification time of the published file, seconds since the epoch (`time file`). */
  fileTime: number;
}

/** The arch createrepo_c writes: source packages are `src` whatever their ARCH tag says. */
export function repoArch(pkg: Pick<RpmPackage, 'arch' | 'isSource'>): string {
  return pkg.isSource ? 'src' : pkg.arch;
}

/** The `<version epoch ver rel/>` attributes: a missing epoch is written as 0. */
export function versionAttrs(pkg: Pick<RpmPackage, 'epoch' | 'version' | 'release'>): [string, string][] {
  return [
    ['epoch', String(pkg.epoch ?? 0)],
    ['ver', pkg.version],
    ['rel', pkg.release],
  ];
}
