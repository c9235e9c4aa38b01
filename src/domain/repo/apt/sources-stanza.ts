/**
 * One source package's entry in an APT `Sources` index, written the way `apt-ftparchive sources`
 * (apt 2.6, no override files) writes it from the `.dsc`: `Source` becomes `Package`, `Priority`
 * and `Status` are dropped, `Directory` is added, and `Files` and every `Checksums-*` field list
 * the .dsc itself first, then the files the .dsc names (Checksums-Sha512 computed for all).
 * Fields follow apt's source field order (apt-pkg/tagfile-order.c), unknown ones after, in the
 * .dsc's order.
 */
import { PackageFormatError } from '../../errors.js';
import type { FileFacts } from '../../package.js';

/** A file of the source package with the facts the repository computed from its bytes. */
export interface SourceFileFacts extends FileFacts {
  name: string;
}

const SOURCE_ORDER: readonly string[] = [
  'Package', 'Source', 'Format', 'Binary', 'Architecture', 'Version', 'Priority', 'Class', 'Section',
  'Origin', 'Maintainer', 'Original-Maintainer', 'Uploaders', 'Dm-Upload-Allowed', 'Standards-Version',
  'Build-Depends', 'Build-Depends-Arch', 'Build-Depends-Indep', 'Build-Conflicts', 'Build-Conflicts-Arch',
  'Build-Conflicts-Indep', 'Testsuite', 'Testsuite-Triggers', 'Homepage', 'Vcs-Browser', 'Vcs-Browse',
  'Vcs-Arch', 'Vcs-Bzr', 'Vcs-Cvs', 'Vcs-Darcs', 'Vcs-Git', 'Vcs-Hg', 'Vcs-Mtn', 'Vcs-Svn',
  'Directory', 'Package-List', 'Files', 'Checksums-Md5', 'Checksums-Sha1', 'Checksums-Sha256', 'Checksums-Sha512',
];
const RANK = new Map(SOURCE_ORDER.map((name, i) => [name.toLowerCase(), i]));
const CANONICAL = new Map(SOURCE_ORDER.map((name) => [name.toLowerCase(), name]));
/** Fields the repository writes itself, or drops as apt-ftparchive does. */
const REPLACED = new Set(['source', 'package', 'priority', 'status', 'directory', 'files', 'checksums-sha1', 'checksums-sha256', 'checksums-sha512']);

function value(name: string, raw: string): string {
  const lines = raw.replace(/\r\n/g, '\n').split('\n');
  const first = (lines[0] ?? '').trim();
  const rest = lines.slice(1);
  while (rest.length > 0 && (rest[rest.length - 1] ?? '').trim() === '') rest.pop();
  for (const line of rest) {
    if (!/^[ \t]/.test(line) || line.trim() === '' || line.includes('\r')) throw new PackageFormatError('bad_control_field', `${name}: malformed continuation line`);
  }
  if (rest.length === 0) return first;
  rest[rest.length - 1] = rest[rest.length - 1]!.trimEnd();
  return [first, ...rest].join('\n');
}

/**
 * The Sources stanza (ending in one `\n`) of a source package: `dscFields` are the .dsc's fields
 * in order, `dsc` the .dsc file itself, `files` the files it names (in its `Files` order),
 * `directory` their pool folder relative to the APT root (`pool/main/h/hello`).
 */
export function sourcesStanza(dscFields: ReadonlyArray<readonly [string, string]>, dsc: SourceFileFacts, files: readonly SourceFileFacts[], directory: string): string {
  if (!/^pool\/[^\s]+[^/]$/.test(directory) || directory.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw new PackageFormatError('bad_pool_path', `invalid source directory ${JSON.stringify(directory)}`);
  }
  const fields: Array<{ name: string; value: string; rank: number; pos: number }> = [];
  const add = (name: string, text: string, pos: number) => fields.push({ name, value: text, rank: RANK.get(name.toLowerCase()) ?? SOURCE_ORDER.length, pos });
  let source: string | null = null;
  dscFields.forEach(([name, raw], pos) => {
    const key = name.toLowerCase();
    if (key === 'source') source = raw.trim();
    if (REPLACED.has(key)) return;
    add(CANONICAL.get(key) ?? name, value(name, raw), pos);
  });
  if (!source) throw new PackageFormatError('bad_source_control', 'Source: field missing in the .dsc');
  const all = [dsc, ...files];
  const list = (digest: (f: SourceFileFacts) => string) => `\n${all.map((f) => ` ${digest(f)} ${f.size} ${f.name}`).join('\n')}`;
  add('Package', source, -1);
  add('Directory', directory, -1);
  add('Files', list((f) => f.md5), -1);
  add('Checksums-Sha1', list((f) => f.sha1), -1);
  add('Checksums-Sha256', list((f) => f.sha256), -1);
  add('Checksums-Sha512', list((f) => f.sha512), -1);
  fields.sort((a, b) => a.rank - b.rank || a.pos - b.pos);
  return fields.map((f) => (f.value === '' || f.value.startsWith('\n') ? `${f.name}:${f.value}\n` : `${f.name}: ${f.value}\n`)).join('');
}

/** The stanza of the same source package published in another pool folder (promotion to another component). */
export function relocateSourcesStanza(stanza: string, fromDirectory: string, toDirectory: string): string {
  return fromDirectory === toDirectory ? stanza : stanza.replace(`\nDirectory: ${fromDirectory}\n`, `\nDirectory: ${toDirectory}\n`);
}
