/**
 * Debian source package control files: the `.dsc` (dpkg-source(1), Debian policy §5.4) and the
 * `.changes` of a source upload (§5.5). Both are deb822 paragraphs, usually OpenPGP clear-signed:
 * the armour is stripped (the signature is not required, and not checked here). File lists are
 * checked strictly, since their names become pool file names.
 */
import { PackageFormatError } from '../errors.js';
import { parseControl, type ControlStanza } from './control.js';
import { assertValidPackageName, assertValidPackageVersion } from './names.js';

/** One file a .dsc or .changes names, with the checksums it states. */
export interface NamedSourceFile {
  name: string;
  size: number;
  md5: string | null;
  sha1: string | null;
  sha256: string;
}

export interface ParsedDsc {
  /** The paragraph's fields in file order (armour removed). */
  control: ControlStanza;
  source: string;
  version: string;
  format: string;
  binaries: string[];
  /** The files the .dsc names (not the .dsc itself), in the order of its `Files` field. */
  files: NamedSourceFile[];
}

export interface ParsedChanges {
  control: ControlStanza;
  source: string;
  version: string;
  files: NamedSourceFile[];
}

const BEGIN_SIGNED = '-----BEGIN PGP SIGNED MESSAGE-----';
const BEGIN_SIGNATURE = '-----BEGIN PGP SIGNATURE-----';
/** File names a source package may have: no path separators, no leading dot, nothing to quote. */
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9.+~_-]*$/;
const MAX_FILES = 64;
const MAX_TEXT = 1024 * 1024;

/**
 * The signed text of an OpenPGP clear-signed message (RFC 4880 §7): the armour header lines
 * (`Hash: …`) up to the first blank line are dropped, the text runs to the signature, and
 * dash-escaped lines (`- -----…`) are unescaped. Unsigned text is returned as it is.
 */
export function stripClearSignature(text: string): string {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  let first = 0;
  while (first < lines.length && (lines[first] ?? '').trim() === '') first++;
  if ((lines[first] ?? '').trimEnd() !== BEGIN_SIGNED) {
    if (text.includes(BEGIN_SIGNATURE)) throw new PackageFormatError('bad_source_control', 'a PGP signature without a signed message header');
    return text;
  }
  let at = first + 1;
  while (at < lines.length && (lines[at] ?? '').trim() !== '') {
    if (!/^[A-Za-z]+: /.test(lines[at] ?? '')) throw new PackageFormatError('bad_source_control', 'malformed PGP armour header');
    at++;
  }
  if (at >= lines.length) throw new PackageFormatError('bad_source_control', 'PGP signed message without text');
  const body: string[] = [];
  for (at += 1; at < lines.length; at++) {
    const line = lines[at] ?? '';
    if (line.trimEnd() === BEGIN_SIGNATURE) return `${body.join('\n')}\n`;
    body.push(line.startsWith('- ') ? line.slice(2) : line);
  }
  throw new PackageFormatError('bad_source_control', 'PGP signed message without its signature block');
}

/** Whether the first bytes of a file look like a source control file (clear-signed or a deb822 paragraph). */
export function looksLikeSourceControl(head: Buffer): boolean {
  const text = head.toString('latin1');
  return text.startsWith(BEGIN_SIGNED) || /^(Format|Source|Origin|Date|Binary|Architecture|Version|Hash):/i.test(text);
}

function paragraphOf(text: string, what: string): ControlStanza {
  if (text.length > MAX_TEXT) throw new PackageFormatError('bad_source_control', `the ${what} is larger than ${MAX_TEXT} bytes`);
  if (text.includes('\0')) throw new PackageFormatError('bad_source_control', `the ${what} is not text`);
  const stanzas = parseControl(stripClearSignature(text), { maxParagraphs: 2 });
  if (stanzas.length !== 1) throw new PackageFormatError('bad_source_control', `the ${what} must hold one paragraph, found ${stanzas.length}`);
  return stanzas[0]!;
}

function required(control: ControlStanza, field: string, what: string): string {
  const value = control.get(field)?.trim();
  if (!value) throw new PackageFormatError('bad_source_control', `${field}: field missing in the ${what}`);
  return value;
}

/** The lines of a checksum list field (`Files`, `Checksums-*`): `<digest> <size> … <name>`. */
function listLines(value: string | undefined): string[][] {
  return (value ?? '').split('\n').map((l) => l.trim()).filter((l) => l !== '').map((l) => l.split(/\s+/));
}

function checkName(name: string, what: string): string {
  if (!FILE_NAME.test(name) || name.length > 255) throw new PackageFormatError('bad_source_control', `invalid file name ${JSON.stringify(name.slice(0, 80))} in the ${what}`);
  return name;
}

function checkSize(size: string | undefined, name: string): number {
  const n = Number(size);
  if (!size || !/^\d+$/.test(size) || !Number.isSafeInteger(n)) throw new PackageFormatError('bad_source_control', `invalid size for ${name}`);
  return n;
}

/**
 * The files a control file lists, cross-checked between `Files` (MD5; `md5Columns` columns per
 * line) and `Checksums-Sha256` (required) and `Checksums-Sha1` (optional): the same names, the
 * same sizes.
 */
function namedFiles(control: ControlStanza, what: string, md5Columns: number): NamedSourceFile[] {
  const files = new Map<string, NamedSourceFile>();
  const sha256Lines = listLines(required(control, 'Checksums-Sha256', what));
  for (const parts of sha256Lines) {
    if (parts.length !== 3 || !/^[0-9a-f]{64}$/.test(parts[0]!)) throw new PackageFormatError('bad_source_control', `malformed Checksums-Sha256 line in the ${what}`);
    const name = checkName(parts[2]!, what);
    if (files.has(name)) throw new PackageFormatError('bad_source_control', `${name} is listed twice in the ${what}`);
    files.set(name, { name, size: checkSize(parts[1], name), md5: null, sha1: null, sha256: parts[0]! });
  }
  if (files.size === 0) throw new PackageFormatError('bad_source_control', `the ${what} names no file`);
  if (files.size > MAX_FILES) throw new PackageFormatError('bad_source_control', `the ${what} names more than ${MAX_FILES} files`);
  const crossCheck = (field: string, columns: number, digest: RegExp, set: (f: NamedSourceFile, value: string) => void, mandatory: boolean) => {
    const value = control.get(field);
    if (value === undefined) {
      if (mandatory) throw new PackageFormatError('bad_source_control', `${field}: field missing in the ${what}`);
      return;
    }
    const lines = listLines(value);
    const seen = new Set<string>();
    for (const parts of lines) {
      if (parts.length !== columns || !digest.test(parts[0]!)) throw new PackageFormatError('bad_source_control', `malformed ${field} line in the ${what}`);
      const name = parts[columns - 1]!;
      const file = files.get(name);
      if (!file || seen.has(name) || file.size !== checkSize(parts[1], name)) {
        throw new PackageFormatError('bad_source_control', `${field} and Checksums-Sha256 of the ${what} disagree about ${JSON.stringify(name.slice(0, 80))}`);
      }
      seen.add(name);
      set(file, parts[0]!);
    }
    if (seen.size !== files.size) throw new PackageFormatError('bad_source_control', `${field} and Checksums-Sha256 of the ${what} name different files`);
  };
  crossCheck('Files', md5Columns, /^[0-9a-f]{32}$/, (f, v) => { f.md5 = v; }, true);
  crossCheck('Checksums-Sha1', 3, /^[0-9a-f]{40}$/, (f, v) => { f.sha1 = v; }, false);
  // In the order of `Files`, as apt-ftparchive lists them.
  const order = listLines(control.get('Files')).map((p) => p[md5Columns - 1]!);
  return order.map((name) => files.get(name)!);
}

/** Parses a `.dsc`: Format, Source, Version, Files and Checksums-Sha256 are required. */
export function parseDsc(text: string): ParsedDsc {
  const what = '.dsc';
  const control = paragraphOf(text, what);
  const format = required(control, 'Format', what);
  if (!/^\d+\.\d+( \([a-z0-9]+\))?$/.test(format)) throw new PackageFormatError('bad_source_control', `unknown source format ${JSON.stringify(format.slice(0, 40))}`);
  const source = required(control, 'Source', what);
  assertValidPackageName(source);
  const version = required(control, 'Version', what);
  assertValidPackageVersion(version);
  const files = namedFiles(control, what, 3);
  const binaries = (control.get('Binary') ?? '').split(',').map((b) => b.trim()).filter((b) => b !== '');
  return { control, source, version, format, binaries, files };
}

/** Parses a source upload's `.changes`: Source, Version, Files (5 columns) and Checksums-Sha256 are required. */
export function parseChanges(text: string): ParsedChanges {
  const what = '.changes';
  const control = paragraphOf(text, what);
  const source = required(control, 'Source', what).split(/\s+/)[0]!;
  assertValidPackageName(source);
  const version = required(control, 'Version', what);
  assertValidPackageVersion(version);
  return { control, source, version, files: namedFiles(control, what, 5) };
}

/** Whether a parsed paragraph is a .changes rather than a .dsc (a .changes has `Changes` and no `Format: 3.x`/`1.0` source format). */
export function isChangesText(text: string): boolean {
  try {
    const control = paragraphOf(text, 'upload');
    return control.has('Changes') || (control.has('Distribution') && !control.has('Package-List') && /\.dsc$/m.test(control.get('Files') ?? ''));
  } catch {
    return false;
  }
}
