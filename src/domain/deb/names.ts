/**
 * Validation of the identity fields of a binary package: Package, Version, Architecture.
 *
 * Debian Policy §5.6.1: "Package names (both source and binary) must consist only of lower case
 * letters (a-z), digits (0-9), plus (+) and minus (-) signs, and periods (.). They must be at
 * least two characters long and must start with an alphanumeric character."
 * None of these can hold '/', so a name is never path-like; names are still never used to build
 * storage paths.
 */
import { PackageFormatError } from '../errors.js';
import { isValidDebianVersion } from './version.js';

const PACKAGE_NAME = /^[a-z0-9][a-z0-9+.-]+$/;
/** dpkg architecture names: lower-case letters, digits and '-' (e.g. amd64, arm64, all, any). */
const ARCHITECTURE_NAME = /^[a-z0-9][a-z0-9-]*$/;
/** Generous caps that no real package reaches; they keep hostile values out of logs and indexes. */
export const MAX_PACKAGE_NAME_LENGTH = 128;
export const MAX_VERSION_LENGTH = 128;
const MAX_ARCHITECTURE_LENGTH = 32;

/** The architectures a package may have to enter an APT distribution of this product. */
export const APT_ARCHITECTURES: readonly string[] = ['amd64', 'all'];

/** Whether `name` is a valid Debian package name (policy §5.6.1, length-capped). */
export function isValidPackageName(name: string): boolean {
  return name.length <= MAX_PACKAGE_NAME_LENGTH && PACKAGE_NAME.test(name);
}

/** Whether `version` is a valid Debian version within the length cap. */
export function isValidPackageVersion(version: string): boolean {
  return version.length <= MAX_VERSION_LENGTH && isValidDebianVersion(version);
}

/** Whether `arch` is syntactically a dpkg architecture name. */
export function isValidArchitectureName(arch: string): boolean {
  return arch.length <= MAX_ARCHITECTURE_LENGTH && ARCHITECTURE_NAME.test(arch);
}

/** Whether a package of architecture `arch` may be published in an APT distribution (amd64 or all). */
export function isAptDistributionArchitecture(arch: string): boolean {
  return APT_ARCHITECTURES.includes(arch);
}

/** Throws PackageFormatError('invalid_package_name') unless `name` is valid. */
export function assertValidPackageName(name: string): void {
  if (!isValidPackageName(name)) {
    throw new PackageFormatError('invalid_package_name', `invalid package name ${JSON.stringify(truncate(name))}`);
  }
}

/** Throws PackageFormatError('invalid_version') unless `version` is valid. */
export function assertValidPackageVersion(version: string): void {
  if (!isValidPackageVersion(version)) {
    throw new PackageFormatError('invalid_version', `invalid version ${JSON.stringify(truncate(version))}`);
  }
}

/** Throws PackageFormatError('invalid_architecture') unless `arch` is a syntactically valid name. */
export function assertValidArchitectureName(arch: string): void {
  if (!isValidArchitectureName(arch)) {
    throw new PackageFormatError('invalid_architecture', `invalid architecture ${JSON.stringify(truncate(arch))}`);
  }
}

function truncate(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
