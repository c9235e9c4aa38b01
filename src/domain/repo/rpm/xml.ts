/**
 * XML text helpers for repodata. Package headers are untrusted and may hold characters XML 1.0
 * cannot carry at all (control characters, lone surrogates): those are dropped rather than
 * escaped, since no escape makes them legal. (createrepo_c refuses such packages outright.)
 */

// Everything outside: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
const INVALID_XML_CHARS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Removes characters that are not allowed anywhere in an XML 1.0 document. */
export function stripInvalidXmlChars(text: string): string {
  return text.replace(INVALID_XML_CHARS, '');
}

/** Escapes element text the way libxml2 serialises it (so output matches createrepo_c byte for byte). */
export function escapeText(text: string): string {
  return stripInvalidXmlChars(text).replace(/[&<>\r]/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#13;',
  );
}

const ATTR_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\n': '&#10;',
  '\r': '&#13;',
  '\t': '&#9;',
};

/** Escapes a double-quoted attribute value (whitespace kept as character references). */
export function escapeAttr(text: string): string {
  return stripInvalidXmlChars(text).replace(/[&<>"\n\r\t]/g, (c) => ATTR_ESCAPES[c] ?? c);
}

/** `name="value"` pairs, skipping undefined values; keeps the given order. */
export function attrs(pairs: [string, string | number | undefined][]): string {
  return pairs
    .filter((p): p is [string, string | number] => p[1] !== undefined)
    .map(([k, v]) => ` ${k}="${escapeAttr(String(v))}"`)
    .join('');
}

/** `<name>text</name>`; libxml2 writes empty text as an open/close pair, not a self-closing tag. */
export function textElement(name: string, text: string, attributes = ''): string {
  return `<${name}${attributes}>${escapeText(text)}</${name}>`;
}
