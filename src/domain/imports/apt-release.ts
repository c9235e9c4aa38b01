/**
 * APT `Release` files (the text InRelease signs): the header fields and the SHA256 section,
 * which is what binds every index file to the signature.
 */
import { PackageFormatError } from '../errors.js';
import { parseControl } from '../deb/control.js';

export interface ReleaseFile {
  size: number;
  sha256: string;
}

export interface Release {
  suite: string | null;
  codename: string | null;
  date: string | null;
  validUntil: string | null;
  architectures: string[];
  components: string[];
  /** Index paths relative to `dists/<suite>/` → their signed size and SHA-256. */
  sha256: Map<string, ReleaseFile>;
}

export function parseRelease(text: string): Release {
  const stanzas = parseControl(text, { maxParagraphs: 1, maxFieldsPerParagraph: 200 });
  const stanza = stanzas[0];
  if (!stanza) throw new PackageFormatError('bad_release', 'empty Release file');
  const section = stanza.get('SHA256');
  if (section === undefined) throw new PackageFormatError('bad_release', 'Release has no SHA256 section');
  const sha256 = new Map<string, ReleaseFile>();
  for (const line of section.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const parts = trimmed.split(/\s+/);
    const [digest, size, path] = parts;
    if (parts.length !== 3 || !digest || !size || !path || !/^[0-9a-fA-F]{64}$/.test(digest) || !/^\d{1,15}$/.test(size)) {
      throw new PackageFormatError('bad_release', `malformed SHA256 line ${JSON.stringify(trimmed.slice(0, 200))}`);
    }
    sha256.set(path, { size: Number(size), sha256: digest.toLowerCase() });
  }
  const words = (name: string) => (stanza.get(name) ?? '').split(/\s+/).filter(Boolean);
  return {
    suite: stanza.get('Suite') ?? null,
    codename: stanza.get('Codename') ?? null,
    date: stanza.get('Date') ?? null,
    validUntil: stanza.get('Valid-Until') ?? null,
    architectures: words('Architectures'),
    components: words('Components'),
    sha256,
  };
}

/** The index files to try for one component and architecture, best compression first. */
export function packagesCandidates(component: string, arch: string): string[] {
  const base = `${component}/binary-${arch}/Packages`;
  return [`${base}.xz`, `${base}.gz`, base];
}
