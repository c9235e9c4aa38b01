/**
 * RPM repository metadata: `repomd.xml` (which files, with their checksums) and a streaming
 * reader of `primary.xml` that hands out one package at a time, so a 60,000-package document
 * is never held whole.
 */
import { PackageFormatError } from '../errors.js';
import { Sense } from '../rpm/tags.js';
import type { CatalogEntry, RpmRelation } from './catalog.js';
import { XmlTokenizer } from './xml-stream.js';

export interface RepomdData {
  type: string;
  location: string;
  checksumType: string;
  checksum: string;
  size: number | null;
  openChecksumType: string | null;
  openChecksum: string | null;
  openSize: number | null;
}

export interface Repomd {
  revision: string | null;
  data: RepomdData[];
}

/** Parses repomd.xml (a small document). */
export function parseRepomd(text: string): Repomd {
  let revision: string | null = null;
  const data: RepomdData[] = [];
  let current: RepomdData | null = null;
  let buffer = '';
  const tokenizer = new XmlTokenizer({
    open(name, attributes) {
      const local = localName(name);
      buffer = '';
      if (local === 'data') {
        current = { type: attributes.type ?? '', location: '', checksumType: '', checksum: '', size: null, openChecksumType: null, openChecksum: null, openSize: null };
      } else if (current && local === 'location') {
        current.location = attributes.href ?? '';
      } else if (current && local === 'checksum') {
        current.checksumType = attributes.type ?? '';
      } else if (current && local === 'open-checksum') {
        current.openChecksumType = attributes.type ?? null;
      }
    },
    text(text) {
      buffer += text;
    },
    close(name) {
      const local = localName(name);
      const value = buffer.trim();
      if (local === 'revision' && current === null) revision = value;
      if (current) {
        if (local === 'checksum') current.checksum = value.toLowerCase();
        else if (local === 'open-checksum') current.openChecksum = value.toLowerCase();
        else if (local === 'size') current.size = toSize(value);
        else if (local === 'open-size') current.openSize = toSize(value);
        else if (local === 'data') {
          data.push(current);
          current = null;
        }
      }
      buffer = '';
    },
  });
  tokenizer.write(text);
  tokenizer.end();
  return { revision, data };
}

const FLAGS: Record<string, number> = {
  EQ: Sense.EQUAL,
  LT: Sense.LESS,
  GT: Sense.GREATER,
  LE: Sense.LESS | Sense.EQUAL,
  GE: Sense.GREATER | Sense.EQUAL,
};

/** Caps on one package's lists, so a hostile primary.xml cannot grow one entry without end. */
const MAX_ENTRIES_PER_LIST = 100_000;

/**
 * Streaming primary.xml reader: `write` text chunks, collect the packages completed so far with
 * `take()`, and call `end()` after the last chunk.
 */
export class PrimaryReader {
  private readonly tokenizer: XmlTokenizer;
  private done: CatalogEntry[] = [];
  private pkg: Partial<CatalogEntry> & { requires: RpmRelation[]; provides: RpmRelation[]; files: string[] } | null = null;
  private list: 'requires' | 'provides' | null = null;
  private checksumType = '';
  private text = '';
  private declared: number | null = null;
  private count = 0;

  constructor() {
    this.tokenizer = new XmlTokenizer({
      open: (name, attributes) => this.open(localName(name), attributes),
      close: (name) => this.close(localName(name)),
      text: (text) => {
        if (this.pkg) this.text += text;
      },
    });
  }

  write(chunk: string): void {
    this.tokenizer.write(chunk);
  }

  end(): void {
    this.tokenizer.end();
    if (this.declared !== null && this.declared !== this.count) {
      throw new PackageFormatError('bad_primary', `primary.xml declares ${this.declared} packages but lists ${this.count}`);
    }
  }

  /** Packages completed since the last call. */
  take(): CatalogEntry[] {
    const out = this.done;
    this.done = [];
    return out;
  }

  private open(name: string, a: Record<string, string>): void {
    this.text = '';
    if (name === 'metadata' && a.packages !== undefined) this.declared = toSize(a.packages);
    if (name === 'package') {
      this.pkg = { format: 'rpm', requires: [], provides: [], files: [], summary: '' };
      return;
    }
    const pkg = this.pkg;
    if (!pkg) return;
    if (name === 'version') pkg.version = evrOf(a.epoch, a.ver ?? '', a.rel);
    else if (name === 'checksum') this.checksumType = a.type ?? '';
    else if (name === 'size') pkg.size = toSize(a.package ?? '');
    else if (name === 'location') pkg.location = a.href ?? '';
    else if (name === 'requires' || name === 'provides') this.list = name;
    else if (name === 'entry' && this.list) {
      const target = pkg[this.list];
      if (target.length >= MAX_ENTRIES_PER_LIST) throw new PackageFormatError('bad_primary', 'too many relation entries');
      const flags = (a.flags ? (FLAGS[a.flags] ?? 0) : 0) | (a.pre === '1' ? Sense.PREREQ : 0);
      target.push({ name: a.name ?? '', flags, evr: a.ver ? evrOf(a.epoch, a.ver, a.rel) : '' });
    }
  }

  private close(name: string): void {
    const pkg = this.pkg;
    if (!pkg) return;
    const value = this.text.trim();
    if (name === 'name') pkg.name = value;
    else if (name === 'arch') pkg.arch = value;
    else if (name === 'summary') pkg.summary = value;
    else if (name === 'checksum') {
      if (this.checksumType === 'sha256') pkg.sha256 = value.toLowerCase();
    } else if (name === 'file') {
      if (pkg.files.length >= MAX_ENTRIES_PER_LIST) throw new PackageFormatError('bad_primary', 'too many file entries');
      pkg.files.push(value);
    } else if (name === 'requires' || name === 'provides') this.list = null;
    else if (name === 'package') {
      this.done.push(finish(pkg));
      this.count += 1;
      this.pkg = null;
    }
    this.text = '';
  }
}

function finish(pkg: Partial<CatalogEntry> & { requires: RpmRelation[]; provides: RpmRelation[]; files: string[] }): CatalogEntry {
  const { name, arch, version, location, size, sha256 } = pkg;
  if (!name || !arch || !version || !location || size === undefined || !sha256) {
    throw new PackageFormatError('bad_primary', `incomplete package entry ${name ?? '(no name)'}: needs name, arch, version, sha256 checksum, size and location`);
  }
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new PackageFormatError('bad_primary', `package ${name}: invalid sha256 checksum`);
  return {
    format: 'rpm', name, arch, version, location, size, sha256, summary: pkg.summary ?? '',
    relations: { requires: pkg.requires, provides: pkg.provides, files: pkg.files },
  };
}

function evrOf(epoch: string | undefined, ver: string, rel: string | undefined): string {
  const e = epoch && epoch !== '0' ? `${epoch}:` : '';
  return `${e}${ver}${rel ? `-${rel}` : ''}`;
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

function toSize(text: string): number {
  if (!/^\d{1,15}$/.test(text)) throw new PackageFormatError('bad_primary', `invalid size ${JSON.stringify(text.slice(0, 20))}`);
  return Number(text);
}
