/**
 * deb822 indexes (`Packages`) read as a stream: text chunks become lines, lines become
 * paragraphs, each paragraph is parsed on its own with the package reader's control parser, so
 * memory holds one paragraph, not the index.
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
    if (/^[ \t]*\r?$/.test(line)) {
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
    if (/^[ \t]*\r?$/.test(line)) {
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
