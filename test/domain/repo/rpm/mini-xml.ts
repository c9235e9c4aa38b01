/**
 * A tiny, strict XML reader for tests: elements, attributes, text, entities. Enough to compare
 * repodata written by createrepo_c and by us semantically, with no dependency.
 */

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e === 'amp') return '&';
    if (e === 'lt') return '<';
    if (e === 'gt') return '>';
    if (e === 'quot') return '"';
    if (e === 'apos') return "'";
    return String.fromCodePoint(e.startsWith('#x') ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10));
  });
}

/** Parses a document and returns its root element; throws on malformed input. */
export function parseXml(doc: string): XmlElement {
  let pos = 0;
  const fail = (msg: string): never => {
    throw new Error(`XML: ${msg} at ${pos}: ${JSON.stringify(doc.slice(pos, pos + 40))}`);
  };
  const skipMisc = (): void => {
    for (;;) {
      while (/\s/.test(doc[pos] ?? '')) pos++;
      if (doc.startsWith('<?', pos)) pos = doc.indexOf('?>', pos) + 2;
      else if (doc.startsWith('<!--', pos)) pos = doc.indexOf('-->', pos) + 3;
      else return;
    }
  };
  const element = (): XmlElement => {
    if (doc[pos] !== '<') fail('expected <');
    pos++;
    const nameMatch = /^[A-Za-z_][\w:.-]*/.exec(doc.slice(pos, pos + 200));
    if (!nameMatch) return fail('bad element name');
    const name = nameMatch[0];
    pos += name.length;
    const attrs: Record<string, string> = {};
    for (;;) {
      while (/\s/.test(doc[pos] ?? '')) pos++;
      if (doc.startsWith('/>', pos)) {
        pos += 2;
        return { name, attrs, children: [], text: '' };
      }
      if (doc[pos] === '>') {
        pos++;
        break;
      }
      const m = /^([A-Za-z_][\w:.-]*)\s*=\s*"([^"<]*)"/.exec(doc.slice(pos));
      if (!m) return fail('bad attribute');
      attrs[m[1]!] = decodeEntities(m[2]!);
      pos += m[0].length;
    }
    const children: XmlElement[] = [];
    let text = '';
    for (;;) {
      if (pos >= doc.length) fail(`unclosed <${name}>`);
      if (doc.startsWith('</', pos)) {
        const close = `</${name}>`;
        if (!doc.startsWith(close, pos)) fail(`expected ${close}`);
        pos += close.length;
        return { name, attrs, children, text: decodeEntities(text) };
      }
      if (doc[pos] === '<') {
        children.push(element());
        continue;
      }
      const next = doc.indexOf('<', pos);
      text += doc.slice(pos, next < 0 ? doc.length : next);
      pos = next < 0 ? doc.length : next;
    }
  };
  skipMisc();
  const root = element();
  skipMisc();
  if (pos !== doc.length) fail('trailing content');
  return root;
}

/** Children named `name`. */
export function childrenNamed(el: XmlElement, name: string): XmlElement[] {
  return el.children.filter((c) => c.name === name);
}

/** The first child named `name`, or throws. */
export function child(el: XmlElement, name: string): XmlElement {
  const found = el.children.find((c) => c.name === name);
  if (!found) throw new Error(`<${el.name}> has no <${name}>`);
  return found;
}
