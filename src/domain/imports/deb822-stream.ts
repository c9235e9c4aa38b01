/**
 * deb822 indexes (`Packages`) read as a stream: text chunks become lines, lines become
 * paragraphs, each paragraph is parsed on its own with the package reader's control parser, so
 * memory holds one paragraph, not the index. The sync reads with debEntryBatches, which cuts the
 * catalog's fields straight out of the text and falls back to that parser for anything unusual.
 */
import { PackageFormatError } from '../errors.js';
import { parseControlStanza, type ControlStanza } from '../deb/control.js';
import type { CatalogEntry } from './catalog.js';

/** A paragraph larger than this is refused (the largest real stanzas are tens of KiB). */
const MAX_PARAGRAPH_CHARS = 4 * 1024 * 1024;

/** Splits decoded text chunks into lines (without the '\n'). */
export async function* lines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of chunks) {
    rest += chunk;
    let at = 0;
    for (let nl = rest.indexOf('\n', at); nl !== -1; nl = rest.indexOf('\n', at)) {
      yield rest.slice(at, nl);
      at = nl + 1;
    }
    rest = rest.slice(at);
    if (rest.length > MAX_PARAGRAPH_CHARS) throw new PackageFormatError('bad_packages', 'line too long');
  }
  if (rest !== '') yield rest;
}

/** Groups lines into paragraphs and parses each one. */
export async function* stanzas(input: AsyncIterable<string>): AsyncGenerator<ControlStanza> {
  let paragraph: string[] = [];
  let size = 0;
  for await (const line of input) {
    if (/^[ \t]*\r*$/.test(line)) {
      if (paragraph.length > 0) yield parseControlStanza(paragraph.join('\n'));
      paragraph = [];
      size = 0;
      continue;
    }
    size += line.length + 1;
    if (size > MAX_PARAGRAPH_CHARS) throw new PackageFormatError('bad_packages', 'paragraph too long');
    paragraph.push(line);
  }
  if (paragraph.length > 0) yield parseControlStanza(paragraph.join('\n'));
}

/**
 * The same paragraphs, one array per input chunk: lines are split synchronously inside each
 * chunk, so a 60,000-package index costs one await per chunk rather than one per line (the
 * per-line promises were most of the garbage a sync produced).
 */
export async function* stanzaBatches(chunks: AsyncIterable<string>): AsyncGenerator<ControlStanza[]> {
  let rest = '';
  let paragraph: string[] = [];
  let size = 0;
  const take = (line: string, out: ControlStanza[]) => {
    if (/^[ \t]*\r*$/.test(line)) {
      if (paragraph.length > 0) out.push(parseControlStanza(paragraph.join('\n')));
      paragraph = [];
      size = 0;
      return;
    }
    size += line.length + 1;
    if (size > MAX_PARAGRAPH_CHARS) throw new PackageFormatError('bad_packages', 'paragraph too long');
    paragraph.push(line);
  };
  for await (const chunk of chunks) {
    rest += chunk;
    const out: ControlStanza[] = [];
    let at = 0;
    for (let nl = rest.indexOf('\n', at); nl !== -1; nl = rest.indexOf('\n', at)) {
      take(rest.slice(at, nl), out);
      at = nl + 1;
    }
    rest = rest.slice(at);
    if (rest.length > MAX_PARAGRAPH_CHARS) throw new PackageFormatError('bad_packages', 'line too long');
    if (out.length > 0) yield out;
  }
  const out: ControlStanza[] = [];
  if (rest !== '') take(rest, out);
  take('', out);
  if (out.length > 0) yield out;
}

/** A `Packages` paragraph as a catalog entry; throws bad_packages naming what is missing. */
export function debEntry(stanza: ControlStanza): CatalogEntry {
  const name = stanza.get('Package');
  const version = stanza.get('Version');
  const arch = stanza.get('Architecture');
  const location = stanza.get('Filename');
  const size = stanza.get('Size');
  const sha256 = stanza.get('SHA256')?.toLowerCase();
  if (!name || !version || !arch || !location || !size || !sha256) {
    throw new PackageFormatError('bad_packages', `paragraph ${name ?? '(no Package)'} lacks one of Package, Version, Architecture, Filename, Size, SHA256`);
  }
  if (!/^\d{1,15}$/.test(size)) throw new PackageFormatError('bad_packages', `${name}: invalid Size`);
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new PackageFormatError('bad_packages', `${name}: invalid SHA256`);
  return {
    format: 'deb',
    name,
    version,
    arch,
    location,
    size: Number(size),
    sha256,
    summary: (stanza.get('Description') ?? '').split('\n', 1)[0] ?? '',
    relations: {
      depends: stanza.get('Depends') ?? null,
      preDepends: stanza.get('Pre-Depends') ?? null,
      provides: stanza.get('Provides') ?? null,
      multiArch: stanza.get('Multi-Arch') ?? null,
    },
  };
}

/** Field names as control.ts accepts them (printable US-ASCII but ':' and space, not starting with '#' or '-'). */
const FIELD_NAME = /^[\x21\x22\x24-\x2c\x2e-\x39\x3b-\x7e][\x21-\x39\x3b-\x7e]*$/;
/** As control.ts: more fields than this in one paragraph is an error. */
const MAX_FIELDS = 1000;

/** The fields a catalog entry keeps, by lower-case name, as slots of {@link FieldSlots}. */
const KEPT: ReadonlyMap<string, number> = new Map([
  'package', 'version', 'architecture', 'filename', 'size', 'sha256', 'description', 'depends', 'pre-depends', 'provides', 'multi-arch',
].map((name, slot) => [name, slot]));
const [PACKAGE, VERSION, ARCHITECTURE, FILENAME, SIZE, SHA256, DESCRIPTION, DEPENDS, PRE_DEPENDS, PROVIDES, MULTI_ARCH] = [...KEPT.values()] as number[];

/** Field names seen: exact name → lower-case key, or null when invalid (bounded: cleared when large). */
const fieldKeys = new Map<string, string | null>();
/** Lower-case name → serial of the last paragraph it appeared in, to find repeated fields without a set per paragraph. */
const fieldSeenIn = new Map<string, number>();
let paragraphSerial = 0;

interface FieldSlots {
  /** First line, trimmed; undefined when the field is absent. */
  first: Array<string | undefined>;
  /** Continuation lines as written, when the field has any. */
  more: Array<string[] | undefined>;
}

/**
 * A paragraph's entry read straight from the text (`text[start, end)`, the paragraph without its
 * final newline): only the kept fields are cut out. Returns null for anything the fast path does
 * not read the way parseControlStanza + debEntry would (a comment or a continuation line first, a
 * line without a field name, an invalid or repeated name, too many fields, a missing or malformed
 * required field): the caller then takes that path, with its errors.
 */
function readEntry(text: string, start: number, end: number, slots: FieldSlots): CatalogEntry | null {
  slots.first.fill(undefined);
  slots.more.fill(undefined);
  const serial = ++paragraphSerial;
  if (fieldKeys.size > 10_000) fieldKeys.clear();
  if (fieldSeenIn.size > 10_000) fieldSeenIn.clear();
  let slot = -2; // the field being continued: a slot, -1 for one not kept, -2 for none yet
  let fields = 0;
  for (let at = start; at < end;) {
    let nl = text.indexOf('\n', at);
    if (nl === -1 || nl > end) nl = end;
    const c = text.charCodeAt(at);
    if (c === 0x20 || c === 0x09) {
      if (slot === -2) return null;
      if (slot >= 0) (slots.more[slot] ??= []).push(text.slice(at, nl));
    } else {
      const colon = text.indexOf(':', at);
      if (colon <= at || colon >= nl) return null;
      const name = text.slice(at, colon);
      let key = fieldKeys.get(name);
      if (key === undefined) {
        key = FIELD_NAME.test(name) ? name.toLowerCase() : null;
        fieldKeys.set(name, key);
      }
      if (key === null || fieldSeenIn.get(key) === serial || ++fields > MAX_FIELDS) return null;
      fieldSeenIn.set(key, serial);
      slot = KEPT.get(key) ?? -1;
      if (slot >= 0) slots.first[slot] = text.slice(colon + 1, nl).trim();
    }
    at = nl + 1;
  }
  const value = (at: number): string | null => {
    const first = slots.first[at];
    if (first === undefined) return null;
    const more = slots.more[at];
    return more ? [first, ...more].join('\n').trimEnd() : first;
  };
  const name = value(PACKAGE!);
  const version = value(VERSION!);
  const arch = value(ARCHITECTURE!);
  const location = value(FILENAME!);
  const size = value(SIZE!);
  const sha256 = value(SHA256!)?.toLowerCase();
  if (!name || !version || !arch || !location || !size || !sha256 || !/^\d{1,15}$/.test(size) || !/^[0-9a-f]{64}$/.test(sha256)) return null;
  return {
    format: 'deb',
    name,
    version,
    arch,
    location,
    size: Number(size),
    sha256,
    // The synopsis: the first line of the value, which is the trimmed first line.
    summary: slots.first[DESCRIPTION!] ?? '',
    relations: { depends: value(DEPENDS!), preDepends: value(PRE_DEPENDS!), provides: value(PROVIDES!), multiArch: value(MULTI_ARCH!) },
  };
}

/** Whether `text[from, to)` is a paragraph separator: only spaces and tabs, then CRs (as parseControl reads lines). */
function blankLine(text: string, from: number, to: number): boolean {
  let at = from;
  while (at < to && (text.charCodeAt(at) === 0x20 || text.charCodeAt(at) === 0x09)) at++;
  while (at < to && text.charCodeAt(at) === 0x0d) at++;
  return at === to;
}

/**
 * A `Packages` index as catalog entries, one array per input chunk: the same paragraphs as
 * {@link stanzaBatches} and the same entries (and errors) as {@link debEntry} of each, without
 * splitting lines or building a ControlStanza per paragraph (the sync's main garbage). A chunk
 * holding a CR, and any paragraph the fast reader does not take, goes through parseControlStanza.
 */
export async function* debEntryBatches(chunks: AsyncIterable<string>): AsyncGenerator<CatalogEntry[]> {
  const slots: FieldSlots = { first: new Array<string | undefined>(KEPT.size), more: new Array<string[] | undefined>(KEPT.size) };
  // `rest` starts at the open paragraph (or the unread partial line); `scan` is where its unread lines begin.
  let rest = '';
  let scan = 0;
  let open = false;
  let size = 0;
  const entry = (text: string, start: number, end: number, plain: boolean): CatalogEntry =>
    (plain ? readEntry(text, start, end, slots) : null) ?? debEntry(parseControlStanza(text.slice(start, end)));
  // One line, `rest[from, to)`, as stanzaBatches' take(); `out` gets a paragraph it completes.
  const take = (from: number, to: number, plain: boolean, out: CatalogEntry[]) => {
    if (blankLine(rest, from, to)) {
      if (open) out.push(entry(rest, 0, from - 1, plain));
      open = false;
      size = 0;
      return;
    }
    size += to - from + 1;
    if (size > MAX_PARAGRAPH_CHARS) throw new PackageFormatError('bad_packages', 'paragraph too long');
    if (!open) {
      // The paragraph starts here: drop what came before it.
      rest = rest.slice(from);
      scan -= from;
      to -= from;
      from = 0;
      open = true;
    }
  };
  for await (const chunk of chunks) {
    rest += chunk;
    const plain = !rest.includes('\r');
    const out: CatalogEntry[] = [];
    for (let nl = rest.indexOf('\n', scan); nl !== -1; nl = rest.indexOf('\n', scan)) {
      const lineStart = scan;
      scan = nl + 1;
      take(lineStart, nl, plain, out);
    }
    if (!open) {
      rest = rest.slice(scan);
      scan = 0;
    }
    if (rest.length - scan > MAX_PARAGRAPH_CHARS) throw new PackageFormatError('bad_packages', 'line too long');
    if (out.length > 0) yield out;
  }
  // The last line may lack its newline; then the end of the text ends the paragraph.
  const out: CatalogEntry[] = [];
  const plain = !rest.includes('\r');
  let end = scan - 1;
  if (scan < rest.length) {
    const lineStart = scan;
    scan = rest.length;
    take(lineStart, rest.length, plain, out);
    end = rest.length;
  }
  if (open) out.push(entry(rest, 0, end, plain));
  if (out.length > 0) yield out;
}
