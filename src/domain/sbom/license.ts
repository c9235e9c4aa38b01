/**
 * Licences as SBOMs want them. SPDX documents accept only SPDX licence expressions, where a
 * free-text licence must become a `LicenseRef-…` with its text under `hasExtractedLicensingInfos`;
 * RPM `License` tags are SPDX on recent Fedora and EL 10 but free text (`GPLv2+`) before, and
 * Debian's machine-readable copyright files use their own short names (`GPL-2+`, `Expat`).
 */

const DEBIAN_NAMES: Record<string, string> = {
  'gpl-1': 'GPL-1.0-only', 'gpl-1+': 'GPL-1.0-or-later',
  'gpl-2': 'GPL-2.0-only', 'gpl-2+': 'GPL-2.0-or-later', 'gpl-2.0': 'GPL-2.0-only', 'gpl-2.0+': 'GPL-2.0-or-later',
  'gpl-3': 'GPL-3.0-only', 'gpl-3+': 'GPL-3.0-or-later', 'gpl-3.0': 'GPL-3.0-only', 'gpl-3.0+': 'GPL-3.0-or-later',
  'lgpl-2': 'LGPL-2.0-only', 'lgpl-2+': 'LGPL-2.0-or-later', 'lgpl-2.1': 'LGPL-2.1-only', 'lgpl-2.1+': 'LGPL-2.1-or-later',
  'lgpl-3': 'LGPL-3.0-only', 'lgpl-3+': 'LGPL-3.0-or-later', 'agpl-3': 'AGPL-3.0-only', 'agpl-3+': 'AGPL-3.0-or-later',
  'apache-2.0': 'Apache-2.0', 'apache-2': 'Apache-2.0', expat: 'MIT', mit: 'MIT', isc: 'ISC', zlib: 'Zlib',
  'bsd-2-clause': 'BSD-2-Clause', 'bsd-3-clause': 'BSD-3-Clause', 'bsd-4-clause': 'BSD-4-Clause',
  'mpl-1.1': 'MPL-1.1', 'mpl-2.0': 'MPL-2.0', 'artistic': 'Artistic-1.0-Perl', 'artistic-2.0': 'Artistic-2.0',
  'psf-2': 'PSF-2.0', 'python-2.0': 'Python-2.0', 'cc0-1.0': 'CC0-1.0', 'openssl': 'OpenSSL', 'curl': 'curl',
  'unlicense': 'Unlicense', 'wtfpl': 'WTFPL', 'ofl-1.1': 'OFL-1.1', 'epl-1.0': 'EPL-1.0', 'epl-2.0': 'EPL-2.0',
};

const ID = /^[A-Za-z0-9][A-Za-z0-9.-]*\+?$/;
const REF = /^(DocumentRef-[A-Za-z0-9.-]+:)?LicenseRef-[A-Za-z0-9.-]+$/;

/**
 * True when `text` has the shape of an SPDX licence expression: identifiers (`GPL-2.0-or-later`,
 * `LicenseRef-x`) joined by AND/OR/WITH with parentheses. Identifiers are not checked against the
 * SPDX list, so `GPLv2+` passes the shape: callers decide with `spdxLicense`.
 */
export function looksLikeSpdxExpression(text: string): boolean {
  const tokens = text.replace(/[()]/g, ' $& ').trim().split(/\s+/);
  if (tokens.length === 0 || tokens[0] === '') return false;
  let depth = 0;
  let expectOperand = true;
  for (const token of tokens) {
    if (token === '(') { if (!expectOperand) return false; depth++; continue; }
    if (token === ')') { if (expectOperand || --depth < 0) return false; continue; }
    if (token === 'AND' || token === 'OR' || token === 'WITH') { if (expectOperand) return false; expectOperand = true; continue; }
    if (!expectOperand || !(ID.test(token) || REF.test(token))) return false;
    expectOperand = false;
  }
  return depth === 0 && !expectOperand;
}

/** Identifiers SPDX lists that older RPM spellings differ from; anything else passes if it looks like one. */
const OLD_RPM_SPELLINGS = /^(GPLv|LGPLv|AGPLv|ASL$|BSD$|GPL$|LGPL$|Public$|Python$|Artistic$|MPLv|Boost$)/;

/**
 * An SPDX expression for the declared licence, or null when it is free text (the caller then
 * writes a LicenseRef). Identifiers are checked for shape only; old Fedora spellings (`GPLv2+`,
 * `ASL 2.0`) are refused so they are kept verbatim as extracted text instead of mislabelled.
 */
export function spdxLicense(declared: string | null): string | null {
  if (!declared) return null;
  // A distribution repeats a few dozen licences across thousands of components: each is parsed once.
  const known = expressions.get(declared);
  if (known !== undefined) return known;
  const expression = parseSpdxLicense(declared);
  if (expressions.size >= 1024) expressions.clear();
  expressions.set(declared, expression);
  return expression;
}

const expressions = new Map<string, string | null>();

function parseSpdxLicense(declared: string): string | null {
  const text = declared.trim();
  if (!looksLikeSpdxExpression(text)) return null;
  const ids = text.replace(/[()]/g, ' ').split(/\s+/).filter((t) => t && t !== 'AND' && t !== 'OR' && t !== 'WITH');
  return ids.some((id) => OLD_RPM_SPELLINGS.test(id)) ? null : text;
}

/** `LicenseRef-` id for a free-text licence: stable for the same text. */
export function licenseRefId(text: string): string {
  const slug = text.replace(/[^A-Za-z0-9.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'unknown';
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) >>> 0;
  return `LicenseRef-${slug}-${hash.toString(16)}`;
}

/**
 * The licence of a Debian package from its `copyright` file when that file is in the
 * machine-readable format (DEP-5); null otherwise (the SBOM then says NOASSERTION). The licences
 * of every Files paragraph are combined with AND: each applies to part of the package.
 */
export function debCopyrightLicense(text: string): string | null {
  const paragraphs = text.replace(/\r\n/g, '\n').split(/\n[ \t]*\n/);
  const header = paragraphs[0] ?? '';
  if (!/^Format:\s*\S*copyright-format/im.test(header)) return null;
  const found: string[] = [];
  for (const paragraph of paragraphs) {
    if (!/^Files:/im.test(paragraph)) continue;
    const m = /^License:[ \t]*([^\n]*)/im.exec(paragraph);
    const value = m?.[1]?.trim();
    if (!value) continue;
    const expression = debianExpression(value);
    if (!found.includes(expression)) found.push(expression);
  }
  if (found.length === 0) return null;
  return found.length === 1 ? found[0]! : found.map((e) => (/\s/.test(e) ? `(${e})` : e)).join(' AND ');
}

/** `GPL-2+ or Artistic` → `GPL-2.0-or-later OR Artistic-1.0-Perl`; unknown names become LicenseRefs. */
function debianExpression(value: string): string {
  const parts = value.split(/\s+(or|and)\s+/i);
  return parts
    .map((part, i) => {
      if (i % 2 === 1) return part.toUpperCase();
      const name = part.replace(/,$/, '').trim();
      const known = DEBIAN_NAMES[name.toLowerCase()];
      // Debian short names outside the table are not SPDX identifiers (`BSD-3-clause~Sun`).
      return known ?? licenseRefId(name);
    })
    .join(' ');
}
