/**
 * Writes the seed corpora of fuzz/corpus/ from real files: packages built with dpkg-deb and
 * rpmbuild (harness/), the smallest .deb files of the machine's APT cache, excerpts of its APT
 * lists, a createrepo_c repository, and the security feed fixtures of test/fixtures/security.
 * Run once when a target or a format changes (`node --import tsx fuzz/seeds.ts`); the result is
 * committed, so fuzzing never depends on what this machine happens to hold. Each corpus stays
 * small (a few files, at most a few hundred KB): the fuzzer grows its own.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { buildDeb, writeArArchive } from '../harness/debs.js';
import { buildRpm } from '../harness/rpms.js';
import { readRpmPackage } from '../src/domain/rpm/reader.js';
import { openRpmPayload } from '../src/domain/rpm/payload.js';

const ROOT = join(import.meta.dirname, '..');
const CORPUS = join(ROOT, 'fuzz', 'corpus');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'security');

function seed(target: string, name: string, data: string | Buffer): void {
  const dir = join(CORPUS, target);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), data);
}

const NUL = '\0';

function compressWith(program: string, args: string[], input: Buffer): Buffer {
  return execFileSync(program, args, { input, maxBuffer: 64 * 1024 * 1024 });
}

async function debSeeds(work: string): Promise<void> {
  const base = {
    version: '1.2-3',
    depends: 'libc6 (>= 2.34), python3:any | python3-minimal (<< 3.12~), default-mta | mail-transport-agent',
    provides: 'seed-virtual (= 1.2)',
    conffiles: ['/etc/seed.conf'],
    files: { 'etc/seed.conf': 'key=value\n', 'usr/bin/seed': { content: '#!/bin/sh\necho seed\n', mode: 0o755 } },
    symlinks: { 'usr/bin/seed-link': 'seed' },
    md5sums: true,
  };
  for (const compression of ['gzip', 'xz', 'zstd', 'none'] as const) {
    const path = await buildDeb(work, { ...base, name: `seed-${compression}`, compression });
    seed('deb-reader', `built-${compression}.deb`, readFileSync(path));
    if (compression === 'gzip') {
      seed('deb-control', 'built-control', execFileSync('dpkg-deb', ['-f', path]));
    }
  }
  // A package whose ar archive was written by hand (GNU-style names), as the malformed tests do.
  const members = execFileSync('ar', ['t', join(work, 'seed-gzip_1.2-3_amd64.deb')], { cwd: work }).toString().trim().split('\n');
  execFileSync('ar', ['x', 'seed-gzip_1.2-3_amd64.deb'], { cwd: work });
  const raw = join(work, 'raw.deb');
  await writeArArchive(raw, members.map((name) => ({ name: `${name}/`, data: readFileSync(join(work, name)) })));
  seed('deb-reader', 'gnu-names.deb', readFileSync(raw));

  // The smallest real packages of the APT cache, one per data.tar compression.
  const cache = '/var/cache/apt/archives';
  if (existsSync(cache)) {
    const debs = readdirSync(cache).filter((f) => f.endsWith('.deb')).map((f) => ({ f, size: statSync(join(cache, f)).size }));
    debs.sort((a, b) => a.size - b.size);
    const seen = new Set<string>();
    for (const { f } of debs) {
      const listing = execFileSync('ar', ['t', join(cache, f)]).toString();
      const data = /data\.tar(\.\w+)?/.exec(listing)?.[0] ?? 'none';
      if (seen.has(data) || seen.size >= 3) continue;
      seen.add(data);
      seed('deb-reader', `apt-${f.replace(/[^\w.+-]/g, '_')}`, readFileSync(join(cache, f)));
      seed('deb-control', `apt-${f.replace(/[^\w.+-]/g, '_')}.control`, execFileSync('dpkg-deb', ['-f', join(cache, f)]));
    }
  }
}

async function rpmSeeds(work: string): Promise<string[]> {
  const built: string[] = [];
  for (const compression of ['gzip', 'xz', 'zstd'] as const) {
    const path = await buildRpm(work, {
      name: `seed-${compression}`,
      version: '1.2',
      release: '3',
      epoch: compression === 'xz' ? 2 : undefined,
      requires: ['bash >= 4.0', '(python3 >= 3.9 or python3.11)', '/bin/sh'],
      provides: ['seed-virtual = 1.2'],
      conflicts: ['old-seed < 1.0'],
      recommends: ['(seed-extra if seed-gui)'],
      files: { '/etc/seed.conf': 'key=value\n', '/usr/bin/seed': { content: '#!/bin/sh\necho seed\n', mode: 0o755 } },
      symlinks: { '/usr/bin/seed-link': 'seed' },
      dirs: ['/usr/share/seed'],
      changelog: [{ date: new Date('2024-01-02T00:00:00Z'), author: 'Seed <seed@example.invalid> - 1.2-3', text: '- first' }],
      payloadCompression: compression,
      noAutoReqProv: true,
    });
    built.push(path);
    seed('rpm-reader', `built-${compression}.rpm`, readFileSync(path));
  }
  // The decompressed payload of one of them: a newc cpio archive.
  const pkg = await readRpmPackage(built[0]!);
  const chunks: Buffer[] = [];
  for await (const chunk of openRpmPayload(built[0]!, pkg)) chunks.push(chunk as Buffer);
  seed('rpm-cpio', 'payload.cpio', Buffer.concat(chunks));
  return built;
}

function rpmMetadataSeeds(work: string, rpms: string[]): void {
  const repo = join(work, 'repo');
  mkdirSync(repo, { recursive: true });
  for (const path of rpms) writeFileSync(join(repo, path.split('/').pop()!), readFileSync(path));
  execFileSync('createrepo_c', ['--simple-md-filenames', '--no-database', '--general-compress-type=gz', repo], { stdio: 'ignore' });
  const repodata = join(repo, 'repodata');
  seed('repomd', 'repomd.xml', readFileSync(join(repodata, 'repomd.xml')));
  const primary = execFileSync('gzip', ['-dc', join(repodata, 'primary.xml.gz')]);
  seed('primary-xml', 'primary.xml', Buffer.concat([primary, Buffer.from(`${NUL}\x07\x03\x40\x11`)]));
}

function aptListSeeds(): void {
  const lists = '/var/lib/apt/lists';
  if (!existsSync(lists)) return;
  const release = readdirSync(lists).find((f) => f.endsWith('_bookworm-updates_InRelease')) ?? readdirSync(lists).find((f) => f.endsWith('InRelease'));
  if (release) {
    // The signed text between the PGP armour, with the SHA256 section cut to 12 lines.
    const text = readFileSync(join(lists, release), 'utf8');
    const body = text.split('\n\n')[1]?.split('\n-----BEGIN PGP SIGNATURE-----')[0] ?? text;
    const kept: string[] = [];
    let section = '';
    let count = 0;
    for (const line of body.split('\n')) {
      if (!line.startsWith(' ')) {
        section = line;
        count = 0;
        if (section.startsWith('MD5Sum')) section = 'skip';
        if (section !== 'skip') kept.push(line);
        continue;
      }
      if (section !== 'skip' && count++ < 12) kept.push(line);
    }
    seed('apt-release', 'InRelease-excerpt', `${kept.join('\n')}\n`);
  }
  const packages = readdirSync(lists).find((f) => f.endsWith('bookworm-updates_main_binary-amd64_Packages.lz4'));
  if (packages) {
    const text = execFileSync('lz4', ['-dc', join(lists, packages)], { maxBuffer: 512 * 1024 * 1024 }).toString('utf8');
    const paragraphs = text.split('\n\n').slice(0, 12).join('\n\n');
    seed('deb822-stream', 'Packages-excerpt', `${paragraphs}\n${NUL}\x05\x11\x3f\x02`);
    seed('deb-control', 'Packages-excerpt', `${paragraphs}\n`);
    const depends = [...new Set([...paragraphs.matchAll(/^(?:Pre-)?Depends: (.*)$/gm)].map((m) => m[1]!))].slice(0, 8);
    depends.forEach((field, i) => seed('deb-relations', `apt-depends-${i}`, field));
  }
}

function textSeeds(): void {
  seed('deb-relations', 'crafted-1', 'a | b, c (<< 2:1.0~rc1-1+b2) | d:any, e:amd64 (= 1.0)');
  seed('deb-relations', 'crafted-2', 'foo (>= 1) [amd64 !i386] <!nocheck> <stage1>, bar:native');
  seed('deb-control', 'source-control', '# comment\nSource: seed\nBuild-Depends: debhelper-compat (= 13)\n\nPackage: seed\nArchitecture: any\nDescription: short\n long\n .\n more\n');
  seed('rpm-relations', 'rich-1', '(foo >= 1.0 or bar)\n1:2.0-3\n2.0\n\x08\x0c');
  seed('rpm-relations', 'rich-2', '(a if (b with c >= 2^post) else (d unless e))\n1.0~rc1-1\n1.0^git1-1\n\x02\x04');
  seed('rpm-relations', 'rich-3', '((x and y) or (z without w))\n0:1\n-\n\x0a\x0a');
  seed('version-dpkg', 'triple-1', '1.0\n1.0-1\n2:0.9~rc1');
  seed('version-dpkg', 'triple-2', '1:2.3.4+dfsg-1~bpo12+1\n1:2.3.4+dfsg-1\n1.2.3a~~');
  seed('version-rpm', 'triple-1', '1.0^git1\n1.0~rc1\n1.0.1');
  seed('version-rpm', 'triple-2', '2.0.1a\n2.0.1\n2.0.1.a');
}

function compressionSeeds(): void {
  const text = Buffer.from('Package: seed\nVersion: 1.0\n'.repeat(40));
  const zeros = Buffer.alloc(1024 * 1024);
  const inputs: Array<[string, Buffer]> = [['text', text], ['empty', Buffer.alloc(0)], ['zeros-1m', zeros]];
  for (const [name, input] of inputs) {
    seed('decompress-gzip', `${name}.gz`, gzipSync(input));
    seed('decompress-xz', `${name}.xz`, compressWith('xz', ['-c', '-6'], input));
    seed('decompress-zstd', `${name}.zst`, compressWith('zstd', ['-c', '-q', '-19'], input));
  }
  // Two members / frames back to back, and the other xz integrity checks.
  seed('decompress-gzip', 'two-members.gz', Buffer.concat([gzipSync(text), gzipSync(text)]));
  seed('decompress-zstd', 'two-frames.zst', Buffer.concat([compressWith('zstd', ['-c', '-q'], text), compressWith('zstd', ['-c', '-q'], text)]));
  seed('decompress-xz', 'sha256-check.xz', compressWith('xz', ['-c', '--check=sha256'], text));
  seed('decompress-xz', 'crc32-check.xz', compressWith('xz', ['-c', '--check=crc32'], text));
  // Bombs: 200 MB of zeros in 6 KB of zstd, 4 MB in 0.7 KB of xz (liblzma decodes a whole
  // 4 KiB input slice before it can be stopped: ~27 MB of zeros for a bigger xz bomb).
  seed('decompress-zstd', 'bomb.zst', compressWith('zstd', ['-c', '-q', '-19'], Buffer.alloc(200 * 1024 * 1024)));
  seed('decompress-xz', 'bomb.xz', compressWith('xz', ['-c', '-9'], Buffer.alloc(4 * 1024 * 1024)));
}

function feedSeeds(): void {
  const osv = join(FIXTURES, 'osv');
  const records = readdirSync(osv).filter((f) => f.endsWith('.json')).sort();
  const parsed = records.map((f) => JSON.parse(readFileSync(join(osv, f), 'utf8')) as unknown);
  seed('osv-feed', 'record.json', readFileSync(join(osv, records[0]!)));
  seed('osv-feed', 'array.json', JSON.stringify(parsed.slice(0, 4), null, 1));
  seed('osv-feed', 'array.json.gz', gzipSync(JSON.stringify(parsed.slice(4, 8))));
  const entries: Record<string, Uint8Array> = {};
  for (const f of records.slice(8)) entries[f] = readFileSync(join(osv, f));
  entries['README.txt'] = Buffer.from('not a record');
  seed('osv-feed', 'records.zip', Buffer.from(zipSync(entries, { level: 6 })));
  const epss = readFileSync(join(FIXTURES, 'epss_scores-2024-06-01.csv'));
  seed('epss-feed', 'epss.csv', epss);
  seed('epss-feed', 'epss.csv.gz', gzipSync(epss));
  const kev = readFileSync(join(FIXTURES, 'known_exploited_vulnerabilities.json'));
  seed('kev-feed', 'kev.json', kev);
  seed('kev-feed', 'kev.json.gz', gzipSync(kev));
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'tollgate-seeds-'));
  try {
    textSeeds();
    compressionSeeds();
    feedSeeds();
    aptListSeeds();
    await debSeeds(work);
    const rpms = await rpmSeeds(work);
    rpmMetadataSeeds(work, rpms);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  for (const target of readdirSync(CORPUS).sort()) {
    const files = readdirSync(join(CORPUS, target));
    const bytes = files.reduce((sum, f) => sum + statSync(join(CORPUS, target, f)).size, 0);
    console.log(`${target.padEnd(18)} ${String(files.length).padStart(3)} files ${String(Math.round(bytes / 1024)).padStart(5)} KB`);
  }
}

await main();
