/**
 * Version ordering used by the matcher, injected per ecosystem so that matching logic stays
 * independent of the comparators. Defaults: dpkg for deb, rpm EVR for rpm.
 */
import { compareDebianVersions } from '../deb/version.js';
import { compareEvr, parseEvr } from '../rpm/vercmp.js';
import type { PackageFormat } from './types.js';

/** A total order on one ecosystem's version strings. `compare` may throw on malformed input. */
export interface VersionScheme {
  readonly name: string;
  /** Negative when a < b, zero when equal, positive when a > b. */
  compare(a: string, b: string): number;
}

/** dpkg ordering, exactly as `dpkg --compare-versions`. */
export const DPKG_SCHEME: VersionScheme = {
  name: 'dpkg',
  compare: (a, b) => compareDebianVersions(a, b),
};

/** rpm ordering of `[epoch:]version-release` strings (missing epoch = 0, as rpm). */
export const RPM_SCHEME: VersionScheme = {
  name: 'rpm',
  compare: (a, b) => compareEvr(parseEvr(a), parseEvr(b)),
};

/** The default scheme of a package format. */
export function defaultVersionScheme(format: PackageFormat): VersionScheme {
  return format === 'deb' ? DPKG_SCHEME : RPM_SCHEME;
}
