/**
 * A small streaming XML tokenizer for repository metadata (repomd.xml, primary.xml): fed text
 * chunks of any size, it reports start tags (with attributes), end tags and text, keeping only
 * the unfinished token between chunks. That is enough for createrepo's output; DTDs and
 * processing instructions are skipped, entity references beyond the XML built-ins and numeric
 * ones are refused (no entity expansion, so no billion-laughs).
 */
import { PackageFormatError } from '../errors.js';

export interface XmlHandler {
  open(name: string, attributes: Record<string, string>): void;
  close(name: string): void;
  text(text: string): void;
}

/** Caps on one token, so a document without '>' cannot make the buffer grow without end. */
const MAX_TOKEN_CHARS = 8 * 1024 * 1024;

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&([^;&\s]{1,10});/g, (_whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return codePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return codePoint(Number.parseInt(name.slice(1), 10));
    const value = NAMED_ENTITIES[name];
    if (value === undefined) throw new PackageFormatError('bad_xml', `unknown entity &${name};`);
    return value;
  });
}

function codePoint(n: number): string {
  if (!Number.isInteger(n) || n < 1 || n > 0x10ffff) throw new PackageFormatError('bad_xml', 'invalid character reference');
  return String.fromCodePoint(n);
}

const ATTRIBUTE = /([^\s=]+)\s*=\s*("([^"]*)"|'([^']*)')/g;

export class XmlTokenizer {
  private buffer = '';
  private depth = 0;
  private ended = false;

  constructor(private readonly handler: XmlHandler) {}

  write(chunk: string): void {
    if (this.ended) throw new PackageFormatError('bad_xml', 'data after the end of the document');
    this.buffer += chunk;
    this.drain(false);
    if (this.buffer.length > MAX_TOKEN_CHARS) throw new PackageFormatError('bad_xml', 'XML token too long');
  }

  end(): void {
    this.drain(true);
    if (this.buffer.trim() !== '') throw new PackageFormatError('bad_xml', 'truncated XML document');
    if (this.depth !== 0) throw new PackageFormatError('bad_xml', 'XML document ends inside an element');
    this.ended = true;
  }

  private drain(final: boolean): void {
    let at = 0;
    const buf = this.buffer;
    while (at < buf.length) {
      const lt = buf.indexOf('<', at);
      if (lt === -1) {
        // Text up to the end may continue in the next chunk, unless this is the end.
        if (final) {
          this.emitText(buf.slice(at));
          at = buf.length;
        }
        break;
      }
      if (lt > at) this.emitText(buf.slice(at, lt));
      at = lt;
      const consumed = this.token(buf, lt);
      if (consumed === -1) break;
      at = consumed;
    }
    this.buffer = buf.slice(at);
  }

  /** Handles the markup starting at `lt`; answers where it ends, or -1 when it is incomplete. */
  private token(buf: string, lt: number): number {
    if (buf.startsWith('<!--', lt)) {
      const end = buf.indexOf('-->', lt + 4);
      return end === -1 ? -1 : end + 3;
    }
    if (buf.startsWith('<![CDATA[', lt)) {
      const end = buf.indexOf(']]>', lt + 9);
      if (end === -1) return -1;
      this.handler.text(buf.slice(lt + 9, end));
      return end + 3;
    }
    if (buf.startsWith('<?', lt)) {
      const end = buf.indexOf('?>', lt + 2);
      return end === -1 ? -1 : end + 2;
    }
    if (buf.startsWith('<!', lt)) {
      if (buf.length - lt < 9) return -1;
      throw new PackageFormatError('bad_xml', 'document type declarations are not accepted');
    }
    const gt = findTagEnd(buf, lt + 1);
    if (gt === -1) return -1;
    const inner = buf.slice(lt + 1, gt);
    if (inner.startsWith('/')) {
      this.depth -= 1;
      if (this.depth < 0) throw new PackageFormatError('bad_xml', 'unbalanced end tag');
      this.handler.close(inner.slice(1).trim());
      return gt + 1;
    }
    const selfClosing = inner.endsWith('/');
    const body = selfClosing ? inner.slice(0, -1) : inner;
    const nameEnd = body.search(/[\s]/);
    const name = nameEnd === -1 ? body : body.slice(0, nameEnd);
    if (name === '') throw new PackageFormatError('bad_xml', 'empty tag name');
    const attributes: Record<string, string> = Object.create(null) as Record<string, string>;
    if (nameEnd !== -1) {
      for (const match of body.slice(nameEnd).matchAll(ATTRIBUTE)) {
        attributes[match[1]!] = decodeEntities(match[3] ?? match[4] ?? '');
      }
    }
    this.handler.open(name, attributes);
    if (selfClosing) this.handler.close(name);
    else this.depth += 1;
    return gt + 1;
  }

  private emitText(raw: string): void {
    if (raw === '') return;
    this.handler.text(decodeEntities(raw));
  }
}

/** The '>' closing a tag that starts before `from`, skipping quoted attribute values. */
function findTagEnd(buf: string, from: number): number {
  let quote: string | null = null;
  for (let i = from; i < buf.length; i += 1) {
    const c = buf[i];
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return i;
    }
  }
  return -1;
}
