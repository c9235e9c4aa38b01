/**
 * A corpus of real .deb files for APT benchmarks, written directly (ar + control.tar.gz +
 * data.tar.gz) because building 50,000 packages with dpkg-deb would take longer than the
 * measurements. The files are genuine: dpkg-deb, apt-ftparchive and aptly read them. The corpus
 * is cached under bench/.work/ with a manifest holding each package's stanza for our side, one
 * JSON entry a line (at 500,000 packages the manifest is ~510 MB, over V8's longest string).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { debPoolPath } from '../../src/domain/repo/apt/pool-path.js';
import { packageStanza } from '../../src/domain/repo/apt/stanza.js';
import { fileLines } from './lines.js';

export interface CorpusEntry {
  name: string;
  /** Path relative to the corpus root (which is laid out as an APT root: pool/main/…). */
  poolPath: string;
  stanza: string;
  /** What data.tar holds, as the upload's inspection lists it (our side's Contents lines). */
  files?: Array<{ path: string; size: number; mode: number; type: string }>;
}

const WORDS = ['lib', 'tool', 'data', 'utils', 'common', 'dev', 'doc', 'server', 'client', 'plugin', 'core', 'extra'];

function tarFile(name: string, content: Buffer, mode = 0o644): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100, 'utf8');
  header.write(`${mode.toString(8).padStart(7, '0')}\0`, 100);
  header.write('0000000\0', 108);
  header.write('0000000\0', 116);
  header.write(`${content.length.toString(8).padStart(11, '0')}\0`, 124);
  header.write(`${(1_700_000_000).toString(8).padStart(11, '0')}\0`, 136);
  header.write('        ', 148);
  header.write('0', 156);
  header.write('ustar\0', 257);
  header.write('00', 263);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  const padding = Buffer.alloc((512 - (content.length % 512)) % 512);
  return Buffer.concat([header, content, padding]);
}

const tarEnd = () => Buffer.alloc(1024);

function arMember(name: string, data: Buffer): Buffer {
  const header = `${name.padEnd(16)}${'1700000000'.padEnd(12)}${'0'.padEnd(6)}${'0'.padEnd(6)}${'100644'.padEnd(8)}${String(data.length).padEnd(10)}\`\n`;
  return Buffer.concat([Buffer.from(header, 'latin1'), data, data.length % 2 ? Buffer.from('\n') : Buffer.alloc(0)]);
}

function controlFields(i: number): Array<[string, string]> {
  const word = WORDS[i % WORDS.length]!;
  const name = `bench-${word}-${i}`;
  const deps = i > 10 ? `bench-${WORDS[(i - 1) % WORDS.length]}-${i - 1} (>= 1.0), libc6 (>= 2.34)` : 'libc6 (>= 2.34)';
  return [
    ['Package', name],
    ['Version', `1.${i % 100}.${i % 7}-${1 + (i % 3)}`],
    ['Architecture', i % 9 === 0 ? 'all' : 'amd64'],
    ['Maintainer', 'Bench Maintainer <bench@example.org>'],
    ['Installed-Size', String(10 + (i % 500))],
    ['Depends', deps],
    ['Section', i % 2 ? 'utils' : 'libs'],
    ['Priority', 'optional'],
    ['Homepage', `https://example.org/${name}`],
    ['Description', `benchmark package number ${i}\n This package exists to measure how fast a repository index is\n published with many packages in it (${word}).`],
  ];
}

const dataFile = (i: number) => ({ path: `./usr/share/bench/${i}.txt`, text: `package ${i}\n` });

function debFile(fields: Array<[string, string]>, i: number): Buffer {
  const controlText = `${fields.map(([k, v]) => `${k}: ${v}`).join('\n')}\n`;
  const controlTar = gzipSync(Buffer.concat([tarFile('./control', Buffer.from(controlText)), tarEnd()]));
  const dataTar = gzipSync(Buffer.concat([tarFile(dataFile(i).path, Buffer.from(dataFile(i).text)), tarEnd()]));
  return Buffer.concat([Buffer.from('!<arch>\n'), arMember('debian-binary', Buffer.from('2.0\n')), arMember('control.tar.gz', controlTar), arMember('data.tar.gz', dataTar)]);
}

/** Writes one package of the corpus and returns its entry. */
export async function writeCorpusPackage(root: string, i: number): Promise<CorpusEntry> {
  const fields = controlFields(i);
  const get = (k: string) => fields.find(([n]) => n === k)![1];
  const bytes = debFile(fields, i);
  const poolPath = debPoolPath({ name: get('Package'), version: get('Version'), architecture: get('Architecture') });
  await mkdir(join(root, poolPath, '..'), { recursive: true });
  await writeFile(join(root, poolPath), bytes);
  const digest = (algo: string) => createHash(algo).update(bytes).digest('hex');
  const stanza = packageStanza(fields, { filename: poolPath, size: bytes.length, md5: digest('md5'), sha1: digest('sha1'), sha256: digest('sha256'), sha512: digest('sha512') });
  const { path, text } = dataFile(i);
  return { name: get('Package'), poolPath, stanza, files: [{ path, size: Buffer.byteLength(text), mode: 0o644, type: 'file' }] };
}

export interface Corpus {
  /** APT root holding pool/ with the first `count` packages. */
  repoRoot: string;
  /** APT root holding pool/ with the `extra` packages added one at a time. */
  extraRoot: string;
  /** Every package, the extra ones last (the manifest our side reads). */
  manifest: string;
  entries: CorpusEntry[];
}

/** The entries of a manifest, one a line, in order. */
export async function* manifestEntries(manifest: string): AsyncGenerator<CorpusEntry> {
  for await (const line of fileLines(manifest)) {
    if (line) yield JSON.parse(line) as CorpusEntry;
  }
}

/** `count` packages plus `extra` more, under `dir` (built once, then read from the manifest). */
export async function debCorpus(dir: string, count: number, extra: number): Promise<Corpus> {
  const corpus = { repoRoot: join(dir, 'repo'), extraRoot: join(dir, 'extra'), manifest: join(dir, 'manifest.ndjson') };
  if (existsSync(corpus.manifest)) {
    const entries: CorpusEntry[] = [];
    for await (const entry of manifestEntries(corpus.manifest)) entries.push(entry);
    if (entries.length === count + extra && entries.every((e) => e.files)) return { ...corpus, entries };
  }
  const entries: CorpusEntry[] = [];
  await mkdir(dir, { recursive: true });
  const file = await open(`${corpus.manifest}.part`, 'w');
  try {
    let lines: string[] = [];
    for (let i = 0; i < count + extra; i++) {
      const entry = await writeCorpusPackage(i < count ? corpus.repoRoot : corpus.extraRoot, i);
      entries.push(entry);
      lines.push(JSON.stringify(entry));
      if (lines.length === 1000 || i === count + extra - 1) {
        await file.write(`${lines.join('\n')}\n`);
        lines = [];
      }
    }
  } finally {
    await file.close();
  }
  await rename(`${corpus.manifest}.part`, corpus.manifest);
  return { ...corpus, entries };
}
