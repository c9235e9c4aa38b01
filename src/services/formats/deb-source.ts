/**
 * Debian source packages (a `.dsc` and the files it names), filed under the `deb` format with
 * architecture `source`: `debHandler` hands them here. The row's own file is the .dsc; the other
 * files are in `metadata.source.files`, stored by SHA-256 and published beside the .dsc in
 * `pool/<component>/<prefix>/<source>/`, and listed in `<component>/source/Sources`.
 */
import { openLocalFile, readLocalText } from '../../adapters/storage/local-file.js';
import { parseDsc } from '../../domain/deb/dsc.js';
import { PackageFormatError } from '../../domain/errors.js';
import type { DebInspected, DebSourceMetadata, FileFacts } from '../../domain/package.js';
import { debSourcePoolDir, versionWithoutEpoch } from '../../domain/repo/apt/pool-path.js';
import { relocateSourcesStanza, sourcesStanza } from '../../domain/repo/apt/sources-stanza.js';
import type { ScanUnit } from './types.js';

const APT_ROOT = 'apt/';
/** The architecture a source package is listed under. */
export const SOURCE_ARCH = 'source';
const MAX_DSC_BYTES = 1024 * 1024;

/** Whether an inspected deb-format package is a source package. */
export const isSourcePackage = (pkg: { arch: string; metadata?: unknown }): boolean => pkg.arch === SOURCE_ARCH;

export const sourceMetadataOf = (pkg: DebInspected): DebSourceMetadata => {
  const source = pkg.metadata.source;
  if (!source) throw new PackageFormatError('bad_source_control', `${pkg.name} ${pkg.version} has no source files recorded`);
  return source;
};

/** Reads and validates a .dsc; the files it names are checked against the upload later (format step). */
export async function inspectDsc(path: string): Promise<DebInspected> {
  let text: string;
  try {
    text = await readLocalText(path, MAX_DSC_BYTES);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'too_large') throw new PackageFormatError('bad_source_control', `the .dsc is larger than ${MAX_DSC_BYTES} bytes`);
    throw error;
  }
  const dsc = parseDsc(text);
  const dscName = `${dsc.source}_${versionWithoutEpoch(dsc.version)}.dsc`;
  if (dsc.files.some((f) => f.name === dscName)) throw new PackageFormatError('bad_source_control', `the .dsc names itself (${dscName})`);
  for (const f of dsc.files) {
    // Every file of a source package starts with its name: they share the source's pool folder.
    if (!f.name.startsWith(`${dsc.source}_`)) throw new PackageFormatError('bad_source_control', `${f.name} is not a file of source package ${dsc.source}`);
  }
  const control = dsc.control.fields.map((f) => [f.name, f.value] as [string, string]);
  return {
    format: 'deb',
    name: dsc.source,
    version: dsc.version,
    arch: SOURCE_ARCH,
    sourceName: dsc.source,
    sourceVersion: dsc.version,
    summary: `source package (${dsc.format})${dsc.binaries.length ? `: ${dsc.binaries.join(', ')}` : ''}`,
    repositoryFilename: dscName,
    files: [],
    metadata: {
      control,
      multiArch: null,
      members: [],
      installed_size: null,
      maintainer: dsc.control.get('Maintainer') ?? null,
      homepage: dsc.control.get('Homepage') ?? null,
      description: '',
      // The facts of the named files are filled in once the upload's files are checked against them.
      source: { dsc: dscName, format: dsc.format, binaries: dsc.binaries, files: dsc.files.map((f) => ({ name: f.name, size: f.size, md5: f.md5 ?? '', sha1: f.sha1 ?? '', sha256: f.sha256, sha512: '' })) },
    },
    relations: { depends: null, preDepends: null, recommends: null, suggests: null, conflicts: null, breaks: null, replaces: null, provides: null, enhances: null, multiArch: null },
  };
}

/** The .dsc's pool path: `apt/pool/<component>/<prefix>/<source>/<source>_<version without epoch>.dsc`. */
export function sourcePoolPath(pkg: DebInspected, component: string): string {
  return `${APT_ROOT}${debSourcePoolDir(pkg.name, component)}/${sourceMetadataOf(pkg).dsc}`;
}

/** The pool folder of a .dsc's pool path (repository-relative, `apt/pool/…`). */
export const sourceDirOf = (dscPoolPath: string): string => dscPoolPath.slice(0, dscPoolPath.lastIndexOf('/'));

/** Pool paths (repository-relative) and digests of the files a source package's .dsc names. */
export function sourceFilePaths(pkg: Pick<DebInspected, 'metadata'>, dscPoolPath: string): Array<{ path: string; sha256: string }> {
  const dir = sourceDirOf(dscPoolPath);
  return (pkg.metadata.source?.files ?? []).map((f) => ({ path: `${dir}/${f.name}`, sha256: f.sha256 }));
}

export function sourceIndexEntry(pkg: DebInspected, facts: FileFacts, poolPath: string): string {
  const meta = sourceMetadataOf(pkg);
  return sourcesStanza(pkg.metadata.control, { name: meta.dsc, ...facts }, meta.files, sourceDirOf(poolPath).slice(APT_ROOT.length));
}

export function relocateSourceIndexEntry(entry: string, from: string, to: string): string {
  return relocateSourcesStanza(entry, sourceDirOf(from).slice(APT_ROOT.length), sourceDirOf(to).slice(APT_ROOT.length));
}

/** The .dsc and every file it names, for the antivirus (`paths`: where each named file is, by name). */
export function sourceScanUnits(dscPath: string, pkg: DebInspected, paths: ReadonlyMap<string, string>): ScanUnit[] {
  const units: ScanUnit[] = [{ name: sourceMetadataOf(pkg).dsc, open: () => openLocalFile(dscPath) }];
  for (const f of sourceMetadataOf(pkg).files) {
    const path = paths.get(f.name);
    if (path) units.push({ name: f.name, open: () => openLocalFile(path) });
  }
  return units;
}
