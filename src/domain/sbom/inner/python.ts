/** Python distributions: `*.dist-info/METADATA`, `*.egg-info/PKG-INFO` or a one-file `*.egg-info` (core metadata, RFC 822 headers). */
import { purl } from '../purl.js';
import type { InnerComponent } from '../model.js';

/** Header fields of core metadata, up to the first blank line (the body is the long description). */
export function metadataHeaders(text: string): Map<string, string> {
  const headers = new Map<string, string>();
  let last: string | null = null;
  for (const line of text.replace(/\r\n/g, '\n').split('\n')) {
    if (line === '') break;
    if (/^[ \t]/.test(line) && last) {
      headers.set(last, `${headers.get(last)}\n${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    last = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(last)) headers.set(last, line.slice(colon + 1).trim());
  }
  return headers;
}

/** PEP 503 normalisation, which the pypi purl type requires. */
export const normalisePythonName = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

export function parsePythonMetadata(text: string, foundIn: string): InnerComponent[] {
  const h = metadataHeaders(text);
  const name = h.get('name');
  const version = h.get('version');
  if (!name || !version) return [];
  const licence = h.get('license-expression') ?? h.get('license') ?? null;
  return [{
    ecosystem: 'pypi', namespace: null, name, version, foundIn,
    purl: purl({ type: 'pypi', name: normalisePythonName(name), version }),
    // Free-text licence bodies (a whole licence pasted in) are not a declaration worth repeating.
    license: licence && licence !== 'UNKNOWN' && !licence.includes('\n') && licence.length <= 200 ? licence : null,
  }];
}
