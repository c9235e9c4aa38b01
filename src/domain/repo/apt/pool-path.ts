/**
 * Where a .deb lives in the pool: `pool/main/<prefix>/<source>/<name>_<version>_<arch>.deb`,
 * following the Debian archive layout (prefix `libx` for `lib*` sources, else the first letter).
 * Every part is validated: these strings come from an uploaded control file and end up in a path.
 */
import { assertValidArchitectureName, assertValidPackageName, assertValidPackageVersion } from '../../deb/names.js';
import { PackageFormatError } from '../../errors.js';

/** The source package name from a `Source:` value (`"hello-src (1.0-1)"` → `hello-src`), else the binary name. */
export function sourceName(packageName: string, sourceField?: string | null): string {
  const name = sourceField?.trim().split(/\s+/)[0] ?? '';
  const chosen = name === '' ? packageName : name;
  assertValidPackageName(chosen);
  return chosen;
}

/** The pool sub-folder for a source: `libfoo` → `libf`, `hello` → `h`. */
export function poolPrefix(source: string): string {
  return source.startsWith('lib') && source.length > 3 ? source.slice(0, 4) : source.slice(0, 1);
}

/** A version without its epoch, as used in .deb file names (`1:2.0-1` → `2.0-1`). */
export function versionWithoutEpoch(version: string): string {
  const m = /^\d+:(.+)$/.exec(version);
  return m ? (m[1] as string) : version;
}

/** Facts needed to place a .deb in the pool. */
export interface PoolPathInput {
  name: string;
  version: string;
  architecture: string;
  /** The control file's `Source:` value, if any. */
  source?: string | null;
  /** Default `main`. */
  component?: string;
}

/** The pool path (relative to the APT root) of a binary package; throws `PackageFormatError` on unsafe parts. */
export function debPoolPath(input: PoolPathInput): string {
  const component = input.component ?? 'main';
  assertValidPackageName(input.name);
  assertValidPackageVersion(input.version);
  assertValidArchitectureName(input.architecture);
  if (!/^[a-z0-9][a-z0-9-]*$/.test(component)) {
    throw new PackageFormatError('invalid_component', `invalid component ${JSON.stringify(component)}`);
  }
  const source = sourceName(input.name, input.source);
  return `pool/${component}/${poolPrefix(source)}/${source}/${input.name}_${versionWithoutEpoch(input.version)}_${input.architecture}.deb`;
}

/** The pool folder (relative to the APT root) of a source package's files: `pool/<component>/<prefix>/<source>`. */
export function debSourcePoolDir(source: string, component = 'main'): string {
  assertValidPackageName(source);
  if (!/^[a-z0-9][a-z0-9-]*$/.test(component)) {
    throw new PackageFormatError('invalid_component', `invalid component ${JSON.stringify(component)}`);
  }
  return `pool/${component}/${poolPrefix(source)}/${source}`;
}
