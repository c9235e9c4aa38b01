/**
 * deb822 control data (Debian Policy §5.1, deb822(5)): paragraphs of `Name: value` fields,
 * continuation lines starting with a space or tab, paragraphs separated by blank lines.
 *
 * A field value keeps its continuation lines verbatim (leading space included), joined with
 * '\n'; the first line is trimmed. So `Description: short\n long\n .\n more` has the value
 * "short\n long\n .\n more", and serialising writes it back byte for byte.
 */
import { PackageFormatError } from '../errors.js';

/** One field as written: original case of the name, value as described above. */
export interface ControlField {
  readonly name: string;
  readonly value: string;
}

/** Field names: printable US-ASCII except ':' and space, not starting with '#' or '-'. */
const FIELD_NAME = /^[\x21\x22\x24-\x2c\x2e-\x39\x3b-\x7e][\x21-\x39\x3b-\x7e]*$/;

/** One paragraph: ordered fields, looked up case-insensitively, original case preserved. */
export class ControlStanza {
  private readonly entries: ControlField[] = [];
  private readonly index = new Map<string, number>();

  constructor(fields: Iterable<ControlField> = []) {
    for (const field of fields) this.add(field.name, field.value);
  }

  /** The fields in their original order. */
  get fields(): readonly ControlField[] {
    return this.entries;
  }

  /** The value of a field (case-insensitive name), or undefined. */
  get(name: string): string | undefined {
    const at = this.index.get(name.toLowerCase());
    return at === undefined ? undefined : this.entries[at]?.value;
  }

  /** Whether a field is present (case-insensitive name). */
  has(name: string): boolean {
    return this.index.has(name.toLowerCase());
  }

  /** Appends a field; a second field with the same name (any case) is an error. */
  add(name: string, value: string): void {
    if (!FIELD_NAME.test(name)) throw new PackageFormatError('bad_control_field', `invalid field name ${JSON.stringify(name)}`);
    const key = name.toLowerCase();
    if (this.index.has(key)) throw new PackageFormatError('bad_control_field', `duplicate field ${name}`);
    this.index.set(key, this.entries.length);
    this.entries.push({ name, value });
  }

  /** Replaces a field's value in place, or appends it when absent. */
  set(name: string, value: string): void {
    const at = this.index.get(name.toLowerCase());
    if (at === undefined) this.add(name, value);
    else this.entries[at] = { name: this.entries[at]?.name ?? name, value };
  }

  /** Removes a field if present. */
  delete(name: string): void {
    const key = name.toLowerCase();
    if (!this.index.has(key)) return;
    const kept = this.entries.filter((field) => field.name.toLowerCase() !== key);
    this.entries.length = 0;
    this.index.clear();
    for (const field of kept) this.add(field.name, field.value);
  }

  /** JSON form: the ordered field list. */
  toJSON(): ControlField[] {
    return [...this.entries];
  }

  /** Plain object view, names as written (handy for JSON output). */
  toRecord(): Record<string, string> {
    // fromEntries defines own properties: a field named __proto__ stays a plain key.
    return Object.fromEntries(this.entries.map((field) => [field.name, field.value]));
  }
}

/** Options for parseControl. */
export interface ParseControlOptions {
  /** Skip lines starting with '#' (allowed in debian/control sources). Default false: error. */
  allowComments?: boolean;
  /** Cap on paragraphs, to bound work on hostile input. Default unlimited. */
  maxParagraphs?: number;
  /** Cap on fields in one paragraph. Default 1000. */
  maxFieldsPerParagraph?: number;
}

/** Parses deb822 text into its paragraphs (empty paragraphs are skipped). */
export function parseControl(text: string, options: ParseControlOptions = {}): ControlStanza[] {
  const maxParagraphs = options.maxParagraphs ?? Number.POSITIVE_INFINITY;
  const maxFields = options.maxFieldsPerParagraph ?? 1000;
  const stanzas: ControlStanza[] = [];
  let current: ControlStanza | null = null;
  let pendingName: string | null = null;
  let pendingLines: string[] = [];

  const flushField = (): void => {
    if (current === null || pendingName === null) return;
    if (current.fields.length >= maxFields) {
      throw new PackageFormatError('bad_control_syntax', `paragraph has more than ${maxFields} fields`);
    }
    current.add(pendingName, pendingLines.join('\n').trimEnd());
    pendingName = null;
    pendingLines = [];
  };
  const flushStanza = (): void => {
    flushField();
    if (current !== null && current.fields.length > 0) stanzas.push(current);
    current = null;
  };

  const lines = text.split('\n');
  for (let number = 1; number <= lines.length; number += 1) {
    // CRLF files read as LF ones; every trailing CR goes, so that a value written back reads the
    // same (stripping one left the rest, and each round trip lost one: found by fuzz/targets/deb-control).
    const line = (lines[number - 1] ?? '').replace(/\r+$/, '');
    if (/^[ \t]*$/.test(line)) {
      flushStanza();
      continue;
    }
    if (line.startsWith('#')) {
      if (options.allowComments) continue;
      throw new PackageFormatError('bad_control_syntax', `line ${number}: comment lines are not allowed here`);
    }
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (pendingName === null) {
        throw new PackageFormatError('bad_control_syntax', `line ${number}: continuation line outside a field`);
      }
      pendingLines.push(line);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new PackageFormatError('bad_control_syntax', `line ${number}: expected "Field: value"`);
    const name = line.slice(0, colon);
    if (!FIELD_NAME.test(name)) {
      throw new PackageFormatError('bad_control_syntax', `line ${number}: invalid field name ${JSON.stringify(name)}`);
    }
    flushField();
    if (current === null) {
      if (stanzas.length >= maxParagraphs) {
        throw new PackageFormatError('bad_control_syntax', `more than ${maxParagraphs} paragraphs`);
      }
      current = new ControlStanza();
    }
    pendingName = name;
    pendingLines = [line.slice(colon + 1).trim()];
  }
  flushStanza();
  return stanzas;
}

/** Parses text that must hold exactly one paragraph (a DEBIAN/control file). */
export function parseControlStanza(text: string, options: ParseControlOptions = {}): ControlStanza {
  const stanzas = parseControl(text, { ...options, maxParagraphs: 2 });
  if (stanzas.length !== 1) {
    throw new PackageFormatError('bad_control_syntax', `expected one paragraph, found ${stanzas.length}`);
  }
  return stanzas[0]!;
}

/**
 * Serialises one paragraph (fields in order, no trailing blank line). Refuses values that would
 * change the structure: an empty or unindented continuation line, or a newline in a field name.
 */
export function serializeControlStanza(stanza: ControlStanza | Iterable<ControlField>): string {
  const fields = stanza instanceof ControlStanza ? stanza.fields : [...stanza];
  let out = '';
  for (const { name, value } of fields) {
    if (!FIELD_NAME.test(name)) throw new PackageFormatError('bad_control_field', `invalid field name ${JSON.stringify(name)}`);
    const [first = '', ...rest] = value.split('\n');
    if (first !== first.trim() && first.trim() !== '') {
      throw new PackageFormatError('bad_control_field', `field ${name}: first line has surrounding spaces`);
    }
    for (const line of rest) {
      if (!/^[ \t]/.test(line) || /^[ \t]*$/.test(line)) {
        throw new PackageFormatError('bad_control_field', `field ${name}: continuation lines must be indented and non-empty`);
      }
    }
    out += first === '' ? `${name}:` : `${name}: ${first}`;
    for (const line of rest) out += `\n${line}`;
    out += '\n';
  }
  return out;
}

/** Serialises several paragraphs separated by blank lines (a Packages or Sources index). */
export function serializeControl(stanzas: Iterable<ControlStanza | Iterable<ControlField>>): string {
  const parts: string[] = [];
  for (const stanza of stanzas) parts.push(serializeControlStanza(stanza));
  return parts.join('\n');
}

/** Formats lines as a multiline value: first line, then each further line indented by a space. */
export function multilineValue(first: string, lines: readonly string[]): string {
  return [first, ...lines.map((line) => (line.trim() === '' ? ' .' : ` ${line}`))].join('\n');
}

/** The synopsis (first line) of a Description value. */
export function descriptionSynopsis(description: string): string {
  return description.split('\n', 1)[0] ?? '';
}
