/**
 * Text rules of LDAP that must be right for security: escaping values placed in search filters
 * (RFC 4515) and comparing distinguished names (RFC 4514) without being fooled by case, spacing
 * or escapes.
 */

/**
 * Escapes a value for an LDAP filter (RFC 4515): `*`, `(`, `)`, `\`, NUL and the other ASCII
 * control characters become `\xx`, so user input can never change the filter's structure.
 * Non-ASCII characters stay as UTF-8 text, which RFC 4515 allows: ldapts decodes each `\xx`
 * escape as a separate character, so escaping UTF-8 bytes would search for the wrong value.
 */
export function escapeFilterValue(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    const special = ch === '*' || ch === '(' || ch === ')' || ch === '\\' || code < 0x20 || code === 0x7f;
    out += special ? `\\${code.toString(16).padStart(2, '0')}` : ch;
  }
  return out;
}

/** One `type=value` pair of a DN, type lower-cased, value unescaped. */
interface Ava {
  type: string;
  value: string;
}

/**
 * Splits a DN into RDNs of attribute/value pairs, honouring `\`-escapes (`\,` and `\2C`) and
 * quoted values. Returns null for a string that is not a DN.
 */
export function parseDn(dn: string): Ava[][] | null {
  const rdns: Ava[][] = [];
  let rdn: Ava[] = [];
  let i = 0;
  const text = dn.trim();
  if (text === '') return [];
  while (i <= text.length) {
    // attribute type up to '='
    const eq = text.indexOf('=', i);
    if (eq === -1) return null;
    const type = text.slice(i, eq).trim().toLowerCase();
    if (!/^[a-z][a-z0-9-]*$|^\d+(\.\d+)*$/.test(type)) return null;
    i = eq + 1;
    const bytes: number[] = [];
    let pendingSpaces: number[] = []; // unescaped trailing spaces are not part of the value
    let started = false;
    let quoted = false;
    for (; i < text.length; i++) {
      const ch = text[i] ?? '';
      if (quoted) {
        if (ch === '"') quoted = false;
        else bytes.push(...Buffer.from(ch, 'utf8'));
        continue;
      }
      if (ch === ',' || ch === ';' || ch === '+') break;
      if (ch === '"' && !started) {
        quoted = true;
        started = true;
        continue;
      }
      if (ch === ' ') {
        if (started) pendingSpaces.push(0x20);
        continue;
      }
      bytes.push(...pendingSpaces);
      pendingSpaces = [];
      started = true;
      if (ch === '\\') {
        const hex = text.slice(i + 1, i + 3);
        if (/^[0-9a-fA-F]{2}$/.test(hex)) {
          bytes.push(parseInt(hex, 16));
          i += 2;
        } else if (i + 1 < text.length) {
          bytes.push(...Buffer.from(text[i + 1] ?? '', 'utf8'));
          i += 1;
        } else return null;
        continue;
      }
      bytes.push(...Buffer.from(ch, 'utf8'));
    }
    if (quoted) return null;
    rdn.push({ type, value: Buffer.from(bytes).toString('utf8') });
    const sep = text[i];
    if (sep !== '+') {
      rdns.push(rdn);
      rdn = [];
    }
    if (sep === undefined) break;
    i += 1;
  }
  return rdns;
}

/** A canonical form for comparing DNs: case, spaces and escaping no longer matter. Null if not a DN. */
export function normalizeDn(dn: string): string | null {
  const rdns = parseDn(dn);
  if (rdns === null) return null;
  return JSON.stringify(
    rdns.map((rdn) => rdn.map((ava) => `${ava.type}=${ava.value.toLowerCase()}`).sort()),
  );
}

/** Case-insensitive DN equality (DNs that do not parse are never equal). */
export function dnEquals(a: string, b: string): boolean {
  const left = normalizeDn(a);
  return left !== null && left === normalizeDn(b);
}

/** Value of the first RDN (`admins` for `cn=admins,ou=groups,…`), or null. */
export function firstRdnValue(dn: string): string | null {
  const first = parseDn(dn)?.[0]?.[0];
  return first ? first.value : null;
}
