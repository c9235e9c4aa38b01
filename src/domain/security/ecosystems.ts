/**
 * Distribution codename → OSV ecosystem, with the package format each distribution publishes and
 * whether its advisories name source or binary packages. The codenames and ecosystems themselves
 * come from the single distribution table (src/domain/distributions.ts).
 */
import { allDistributions } from '../distributions.js';
import type { PackageFormat } from './types.js';

/** One distribution's view of the vulnerability data. */
export interface DistroEcosystem {
  codename: string;
  format: PackageFormat;
  /** OSV `affected[].package.ecosystem` value whose advisories apply. */
  ecosystem: string;
  /**
   * What the advisories name: Debian/Ubuntu/SUSE name source packages, AlmaLinux/Rocky binary
   * ones. Informational: the RPM matcher tries both names anyway.
   */
  advisories_name: 'source' | 'binary';
}

/** Families whose advisories name source packages (the others name binary packages). */
const SOURCE_NAMING_ECOSYSTEMS = /^(?:Debian|Ubuntu|openSUSE|SUSE):/;

/** Codename → ecosystem of every current distribution (src/domain/distributions.ts); a distribution without one has no entry. */
export function distroEcosystems(): DistroEcosystem[] {
  return allDistributions()
    .filter((d) => d.osvEcosystem !== '')
    .map((d) => ({
      codename: d.codename,
      format: d.format,
      ecosystem: d.osvEcosystem,
      advisories_name: SOURCE_NAMING_ECOSYSTEMS.test(d.osvEcosystem) ? 'source' : 'binary',
    }));
}

/** The ecosystem entry of a codename, or undefined for an unknown codename. */
export function ecosystemForCodename(codename: string): DistroEcosystem | undefined {
  return distroEcosystems().find((d) => d.codename === codename);
}

/** Every codename whose advisories come from `ecosystem` (several codenames may share one). */
export function codenamesForEcosystem(ecosystem: string): string[] {
  return distroEcosystems().filter((d) => d.ecosystem === ecosystem).map((d) => d.codename);
}
