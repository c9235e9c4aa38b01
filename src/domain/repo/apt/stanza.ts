/**
 * One package's entry in an APT `Packages` index (a deb822 stanza), written the way
 * `apt-ftparchive packages` writes it, so that our index and the reference tool's agree byte for
 * byte on the same .deb files.
 */
import { PackageFormatError } from '../../errors.js';

/** The file facts `apt-ftparchive` adds to the control fields. */
export interface PoolFileFacts {
  /** Path relative to the repository root (the `apt/` folder), e.g. `pool/main/h/hello/hello_1.0_amd64.deb`. */
  filename: string;
  size: number;
  md5: string;
  sha1: string;
  sha256: string;
  sha512: string;
}

/**
 * Control fields in file order: `[name, value]` pairs, `{name, value}` objects (as
 * `ControlStanza.fields` from domain/deb/control.ts gives them), or a record (insertion order).
 */
export type ControlFields =
  | ReadonlyArray<readonly [string, string]>
  | ReadonlyArray<{ readonly name: string; readonly value: string }>
  | Readonly<Record<string, string>>;

/**
 * The order `apt-ftparchive` (apt 2.6) gives known fields, observed on real .deb files. Fields not
 * listed follow, in the order they appear in the control file. Obsolete names (Class, Revision…)
 * are deliberately absent: apt treats them as unknown fields too.
 */
const CANONICAL_ORDER: readonly string[] = [
  'Package', 'Package-Type', 'Architecture', 'Subarchitecture', 'Version', 'Kernel-Version',
  'Built-Using', 'Static-Built-Using', 'Built-For-Profiles', 'Auto-Built-Package', 'Multi-Arch',
  'Priority', 'Protected', 'Important', 'Essential', 'Installer-Menu-Item', 'Section', 'Source',
  'Origin', 'Maintainer', 'Original-Maintainer', 'Bugs', 'Installed-Size', 'Provides',
  'Pre-Depends', 'Depends', 'Recommends', 'Suggests', 'Conflicts', 'Breaks', 'Replaces',
  'Enhances', 'Filename', 'MSDOS-Filename', 'Size', 'MD5sum', 'SHA1', 'SHA256', 'SHA512',
  'Homepage', 'Description', 'Description-md5', 'Tag', 'Task',
];
const RANK = new Map(CANONICAL_ORDER.map((name, i) => [name.toLowerCase(), i]));
const CANONICAL_NAME = new Map(CANONICAL_ORDER.map((name) => [name.toLowerCase(), name]));

/** Fields the repository computes itself: a control file must not be able to set them. */
const FILE_FIELDS = new Set(['filename', 'size', 'md5sum', 'sha1', 'sha256', 'sha512']);

/** deb822 field names: printable ASCII without colon or space, not starting with `#` or `-`. */
const FIELD_NAME = /^[!-"$-,.-9;-~][!-9;-~]*$/;
const HEX = { md5: 32, sha1: 40, sha256: 64, sha512: 128 } as const;

/**
 * Build a stanza (ending in one `\n`, no blank line) from control fields and the pool file's facts.
 * Values are as a deb822 parser returns them: the first line without its leading blank, each
 * continuation line with its leading space kept (`"short\n long line\n ."`). A value that would
 * break the stanza (an empty or unindented continuation line) throws `bad_control_field`, which
 * also makes injecting extra fields through a value impossible.
 */
export function packageStanza(controlFields: ControlFields, file: PoolFileFacts): string {
  const entries = fieldEntries(controlFields);
  const seen = new Set<string>();
  const fields: Array<{ name: string; value: string; rank: number; pos: number }> = [];
  entries.forEach(([rawName, rawValue], pos) => {
    if (!FIELD_NAME.test(rawName)) {
      throw new PackageFormatError('bad_control_field', `invalid field name ${JSON.stringify(rawName)}`);
    }
    const key = rawName.toLowerCase();
    if (seen.has(key)) throw new PackageFormatError('bad_control_field', `duplicate field ${rawName}`);
    seen.add(key);
    if (FILE_FIELDS.has(key)) return;
    fields.push({
      name: CANONICAL_NAME.get(key) ?? rawName,
      value: normaliseValue(rawName, rawValue),
      rank: RANK.get(key) ?? CANONICAL_ORDER.length,
      pos,
    });
  });
  for (const required of ['package', 'version', 'architecture']) {
    if (!seen.has(required)) {
      throw new PackageFormatError('bad_control_field', `${CANONICAL_NAME.get(required)}: field missing`);
    }
  }
  checkFileFacts(file);
  const add = (name: string, value: string): void => {
    fields.push({ name, value, rank: RANK.get(name.toLowerCase()) ?? CANONICAL_ORDER.length, pos: -1 });
  };
  add('Filename', file.filename);
  add('Size', String(file.size));
  add('MD5sum', file.md5);
  add('SHA1', file.sha1);
  add('SHA256', file.sha256);
  add('SHA512', file.sha512);
  // Stable sort: known fields by rank, unknown ones keep their control-file order.
  fields.sort((a, b) => a.rank - b.rank || a.pos - b.pos);
  // A value with an empty first line (e.g. a multi-line list) gets no blank after the colon.
  return fields.map((f) => (f.value === '' || f.value.startsWith('\n') ? `${f.name}:${f.value}\n` : `${f.name}: ${f.value}\n`)).join('');
}

/** The `Packages` file body for stanzas already in their published order. */
export function packagesIndex(stanzas: readonly string[]): string {
  // apt-ftparchive ends every stanza, the last one included, with a blank line.
  return stanzas.map((s) => (s.endsWith('\n') ? s : `${s}\n`) + '\n').join('');
}

function fieldEntries(fields: ControlFields): Array<readonly [string, string]> {
  // Array.isArray does not narrow readonly array unions, hence the one cast.
  if (!Array.isArray(fields)) return Object.entries(fields as Readonly<Record<string, string>>);
  return (fields as ReadonlyArray<readonly [string, string] | { readonly name: string; readonly value: string }>)
    .map((f) => ('name' in f ? [f.name, f.value] as const : f));
}

function normaliseValue(name: string, value: string): string {
  const lines = value.replace(/\r\n/g, '\n').split('\n');
  const first = (lines[0] ?? '').trim();
  const rest = lines.slice(1);
  // Trailing blank continuation lines are dropped, as deb822 parsers do with trailing whitespace.
  while (rest.length > 0 && (rest[rest.length - 1] ?? '').trim() === '') rest.pop();
  for (const line of rest) {
    if (!/^[ \t]/.test(line) || line.trim() === '' || line.includes('\r')) {
      throw new PackageFormatError('bad_control_field', `${name}: malformed continuation line`);
    }
  }
  if (first.includes('\r')) throw new PackageFormatError('bad_control_field', `${name}: control character in value`);
  if (rest.length === 0) return first;
  const last = rest.length - 1;
  rest[last] = (rest[last] ?? '').trimEnd();
  return [first, ...rest].join('\n');
}

function checkFileFacts(file: PoolFileFacts): void {
  if (!/^[^\s/][^\s]*$/.test(file.filename) || file.filename.split('/').some((s) => s === '..' || s === '.' || s === '')) {
    throw new PackageFormatError('bad_pool_path', `invalid pool filename ${JSON.stringify(file.filename)}`);
  }
  if (!Number.isSafeInteger(file.size) || file.size < 0) {
    throw new PackageFormatError('bad_file_size', `invalid size ${file.size}`);
  }
  for (const algo of ['md5', 'sha1', 'sha256', 'sha512'] as const) {
    if (!new RegExp(`^[0-9a-f]{${HEX[algo]}}$`).test(file[algo])) {
      throw new PackageFormatError('bad_checksum', `invalid ${algo} ${JSON.stringify(file[algo])}`);
    }
  }
}
