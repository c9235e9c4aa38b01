import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { assembleDocuments, packageChunks, repomdRecord, type PackageChunks } from '../../../../src/domain/repo/rpm/assemble.js';
import { DOCUMENT_TYPES, GzipXmlDocument } from '../../../../src/domain/repo/rpm/gzip-document.js';
import { repomdXml, type RepomdRecord } from '../../../../src/domain/repo/rpm/repomd.js';
import { readRpmPackage } from '../../../../src/domain/rpm/reader.js';
import { buildRpms, type RpmSpec } from '../../../../harness/rpms.js';
import { makeTempDir } from '../../../helpers/tmp.js';
import { child, childrenNamed, parseXml, type XmlElement } from './mini-xml.js';

const run = promisify(execFile);

const day = (iso: string): Date => new Date(`${iso}T00:00:00Z`);

const SPECS: RpmSpec[] = [
  {
    name: 'alpha',
    version: '1.0',
    release: '1',
    requires: ['bash >= 4.0'],
    files: { '/usr/bin/alpha': { content: '#!/bin/sh\necho alpha\n', mode: 0o755 }, '/etc/alpha.conf': 'a=1\n' },
    changelog: [{ date: day('2024-01-02'), author: 'Ann <ann@example.org> - 1.0-1', text: '- first' }],
  },
  { name: 'alpha', version: '1.10', release: '1', files: { '/usr/bin/alpha': 'v110' } },
  { name: 'alpha', version: '0.5', release: '1', epoch: 1, files: { '/usr/bin/alpha': 'epoch' } },
  {
    name: 'beta',
    version: '2.0',
    release: '4.el9',
    arch: 'noarch',
    payloadCompression: 'xz',
    requiresPre: ['/usr/sbin/useradd'],
    requiresPost: ['coreutils', '/bin/sh'],
    requires: ['coreutils'],
    provides: ['beta-api = 2', 'beta(plugin)'],
    conflicts: ['gamma < 1.0'],
    obsoletes: ['beta-old <= 1.9-1'],
    recommends: ['beta-docs'],
    suggests: ['beta-extra >= 1:1.0-1'],
    supplements: ['(beta-lang and langpacks-fr)'],
    enhances: ['alpha'],
    files: {
      '/usr/lib/sendmail': 'mta',
      '/opt/beta/sbin/betad': { content: 'daemon', mode: 0o755 },
      '/usr/share/doc/beta/README': 'read me',
      '/etc/beta/beta.conf': 'conf',
    },
    dirs: ['/etc/beta', '/usr/share/beta'],
    ghosts: ['/var/log/beta.log', '/etc/beta/generated.conf'],
    symlinks: { '/usr/bin/beta': '../../opt/beta/sbin/betad' },
  },
  {
    name: 'gamma',
    version: '1.2.3',
    release: '1',
    payloadCompression: 'zstd',
    summary: 'Gamma: <tags> & "quotes" — ünïcödé',
    description: 'Line one & <two>.\n\n  Indented "line" three.\tTabbed.',
    url: 'https://example.org/?a=1&b=2',
    vendor: 'Example & Co',
    packager: 'Pat <pat@example.org>',
    license: 'MIT AND (BSD-3-Clause OR Apache-2.0)',
    group: 'Development/Tools',
    files: { '/usr/share/gamma/data': 'data' },
    changelog: Array.from({ length: 13 }, (_, i) => ({
      // Newest first; a few share a date to exercise createrepo_c's date nudging.
      date: day(`2023-${String(12 - Math.min(i, 11)).padStart(2, '0')}-${i % 3 === 0 ? '01' : '15'}`),
      author: `Dev ${i} <dev${i}@example.org> - 1.2.3-${13 - i}  `,
      text: `- change ${i} with <markup> & "quotes"`,
    })),
  },
  {
    name: 'delta',
    version: '3',
    release: '1',
    noAutoReqProv: true,
    provides: ['delta-cap = 3', 'libdelta.so.1()(64bit)'],
    requires: [
      'libc.so.6()(64bit)',
      'libc.so.6(GLIBC_2.17)(64bit)',
      'libc.so.6(GLIBC_2.4)(64bit)',
      'libc.so.6(GLIBC_2.34)(64bit)',
      'delta-cap = 3',
      '/usr/bin/delta',
      '/usr/share/delta/helper',
      'zlib >= 1.2',
      'zlib',
    ],
    requiresPost: ['zlib'],
    files: { '/usr/bin/delta': 'delta', '/usr/share/delta/helper': 'helper' },
  },
  {
    name: 'epsilon',
    version: '0.1^git20240101.abc',
    release: '0.1',
    arch: 'noarch',
    requires: ['(alpha >= 1.0 or beta)', '(gamma if delta)', 'python3dist(requests) >= 2.0'],
    files: { '/usr/lib/python3/site-packages/epsilon/__init__.py': '' },
  },
  { name: 'zeta', version: '1', release: '1', noAutoReqProv: true },
  {
    name: 'eta',
    version: '5.0',
    release: '2',
    files: {
      '/usr/lib64/eta/blob.bin': Buffer.from(Array.from({ length: 40_000 }, (_, i) => (i * 31) % 256)),
      '/usr/libexec/eta/bin/tool': { content: 'tool', mode: 0o755 },
    },
    changelog: [
      { date: day('2024-05-05'), author: 'Same <same@example.org> - 5.0-2', text: '- b' },
      { date: day('2024-05-05'), author: 'Same <same@example.org> - 5.0-1', text: '- a' },
    ],
  },
  { name: 'theta', version: '1.0~rc2', release: '1', arch: 'noarch', description: '', files: { '/usr/share/theta/x': 'x' } },
];

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** The documents createrepo_c wrote: [primary, filelists, other] as text. */
async function readCreaterepoOutput(repo: string): Promise<Record<string, string>> {
  const repomd = parseXml(await readFile(join(repo, 'repodata', 'repomd.xml'), 'utf8'));
  const out: Record<string, string> = {};
  for (const data of childrenNamed(repomd, 'data')) {
    const type = data.attrs.type!;
    if (!['primary', 'filelists', 'other'].includes(type)) continue;
    out[type] = gunzipSync(await readFile(join(repo, child(data, 'location').attrs.href!))).toString('utf8');
  }
  return out;
}

/** Splits a document into its `<package` chunks (raw text), keyed by package id. */
function rawChunks(doc: string, type: string): Map<string, string> {
  const chunks = new Map<string, string>();
  const parts = doc.split(/(?=<package[ >])/).slice(1);
  for (let part of parts) {
    part = part.replace(/<\/(metadata|filelists|otherdata)>$/, '');
    const id = type === 'primary' ? /<checksum [^>]*>([0-9a-f]+)</.exec(part)?.[1] : /pkgid="([0-9a-f]+)"/.exec(part)?.[1];
    assert.ok(id, 'every chunk has a package id');
    chunks.set(id, part);
  }
  return chunks;
}

function packageId(el: XmlElement, type: string): string {
  return type === 'primary' ? child(el, 'checksum').text : el.attrs.pkgid!;
}

/**
 * The repodata of `chunks` in memory, one piece per document, timestamped `timestamp` (also the
 * revision): what the service's writer streams to disk, built at once for a small repository.
 */
async function buildRepodata(chunks: readonly PackageChunks[], options: { timestamp: number }): Promise<{ files: { path: string; data: Buffer }[]; repomd: string }> {
  const files: { path: string; data: Buffer }[] = [];
  const records: RepomdRecord[] = [];
  for (const type of DOCUMENT_TYPES) {
    const { document, bytes: head } = await GzipXmlDocument.begin(type);
    const body = chunks.length > 0 ? await document.add(chunks.map((c) => c[type]).join('')) : Buffer.alloc(0);
    const { bytes: tail, facts } = await document.finish();
    const record = repomdRecord(type, facts, options.timestamp);
    files.push({ path: record.href, data: Buffer.concat([head, body, tail]) });
    records.push(record);
  }
  return { files, repomd: repomdXml(String(options.timestamp), records) };
}

describe('RPM repodata', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => undefined;
  let crRepo = '';
  let ourRepo = '';
  let chunks: PackageChunks[] = [];
  let theirs: Record<string, string> = {};

  before(async () => {
    ({ dir, cleanup } = await makeTempDir());
    crRepo = join(dir, 'cr');
    ourRepo = join(dir, 'ours');
    const paths = await buildRpms(crRepo, SPECS);
    await run('createrepo_c', ['--quiet', '--no-database', crRepo]);
    theirs = await readCreaterepoOutput(crRepo);
    chunks = await Promise.all(
      paths.map(async (path) => {
        const pkg = await readRpmPackage(path);
        const data = await readFile(path);
        const { mtimeMs } = await stat(path);
        return packageChunks({ pkg, checksum: sha256(data), locationHref: basename(path), fileTime: Math.floor(mtimeMs / 1000) });
      }),
    );
    const repodata = await buildRepodata(chunks, { timestamp: 1_700_000_000 });
    await mkdir(join(ourRepo, 'repodata'), { recursive: true });
    for (const f of repodata.files) await writeFile(join(ourRepo, f.path), f.data);
    await writeFile(join(ourRepo, 'repodata', 'repomd.xml'), repodata.repomd);
    for (const path of paths) await writeFile(join(ourRepo, basename(path)), await readFile(path));
  });
  after(() => cleanup());

  for (const type of ['primary', 'filelists', 'other'] as const) {
    it(`${type}.xml has the same packages and content as createrepo_c's (parsed)`, () => {
      const docs = assembleDocuments(chunks);
      const ours = parseXml(docs[type]);
      const cr = parseXml(theirs[type]!);
      assert.equal(ours.name, cr.name);
      // Everything createrepo_c puts on the root but its package count, which we leave out (gzip-document.ts).
      const { packages: count, ...crAttrs } = cr.attrs;
      assert.equal(count, String(SPECS.length));
      assert.deepEqual(ours.attrs, crAttrs);
      assert.equal(ours.children.length, SPECS.length);
      const crById = new Map(cr.children.map((p) => [packageId(p, type), p]));
      assert.equal(crById.size, SPECS.length);
      for (const p of ours.children) {
        const id = packageId(p, type);
        assert.deepEqual(p, crById.get(id), `${type} entry of ${p.attrs.name ?? child(p, 'name').text}`);
      }
    });

    it(`${type}.xml package chunks are byte-identical to createrepo_c's`, () => {
      const crChunks = rawChunks(theirs[type]!, type);
      for (const c of chunks) {
        const id = type === 'primary' ? /pkgid="YES">([0-9a-f]+)</.exec(c.primary)![1]! : /pkgid="([0-9a-f]+)"/.exec(c[type])![1]!;
        assert.equal(c[type], crChunks.get(id), `${type} chunk of ${c.key.name}-${c.key.version}`);
      }
    });
  }

  it('covers the interesting cases (so the comparison above means something)', () => {
    const primary = assembleDocuments(chunks).primary;
    for (const needle of [
      'pre="1"',
      'type="dir"',
      'type="ghost"',
      '<file>/usr/lib/sendmail</file>',
      '<file>/opt/beta/sbin/betad</file>',
      'libc.so.6(GLIBC_2.34)(64bit)',
      '<rpm:recommends>',
      '<rpm:supplements>',
      '&amp;',
      '&lt;',
    ]) {
      assert.ok(primary.includes(needle), needle);
    }
    assert.ok(!primary.includes('GLIBC_2.17'), 'only the highest libc.so.6 require is kept');
    assert.ok(!primary.includes('rpmlib('), 'rpmlib requires are dropped');
    const gammaOther = chunks.find((c) => c.key.name === 'gamma')!.other;
    assert.equal(gammaOther.match(/<changelog /g)?.length, 10, 'changelog limited to 10 entries');
  });

  it('lists packages in the order given (the index order: the order they arrived)', () => {
    const names = (docs: { primary: string }) => parseXml(docs.primary).children.map((p) => {
      const v = child(p, 'version').attrs;
      return `${child(p, 'name').text}-${v.epoch}:${v.ver}-${v.rel}`;
    });
    const given = chunks.map((c) => `${c.key.name}-${c.key.epoch ?? 0}:${c.key.version}-${c.key.release}`);
    assert.deepEqual(names(assembleDocuments(chunks)), given);
    assert.deepEqual(names(assembleDocuments([...chunks].reverse())), [...given].reverse());
  });

  it('writes a repomd.xml whose checksums and sizes describe the files', async () => {
    const repomd = parseXml(await readFile(join(ourRepo, 'repodata', 'repomd.xml'), 'utf8'));
    const records = childrenNamed(repomd, 'data');
    assert.deepEqual(records.map((r) => r.attrs.type), ['primary', 'filelists', 'other']);
    assert.equal(child(repomd, 'revision').text, '1700000000');
    for (const r of records) {
      const href = child(r, 'location').attrs.href!;
      const data = await readFile(join(ourRepo, href));
      const open = gunzipSync(data);
      assert.equal(child(r, 'checksum').text, sha256(data));
      assert.equal(href, `repodata/${sha256(data)}-${r.attrs.type}.xml.gz`);
      assert.equal(child(r, 'open-checksum').text, sha256(open));
      assert.equal(child(r, 'size').text, String(data.length));
      assert.equal(child(r, 'open-size').text, String(open.length));
      assert.equal(child(r, 'timestamp').text, '1700000000');
    }
    // Same input, same bytes.
    const again = await buildRepodata(chunks, { timestamp: 1_700_000_000 });
    assert.equal(again.repomd, await readFile(join(ourRepo, 'repodata', 'repomd.xml'), 'utf8'));
    assert.deepEqual((await readdir(join(ourRepo, 'repodata'))).length, 4);
  });

  it('is read by dnf: packages, dependencies, file lists and changelogs', async () => {
    const dnf = async (...args: string[]): Promise<string> => {
      const { stdout } = await run('dnf', [
        '-q',
        '--releasever=9',
        '--setopt=reposdir=/dev/null',
        `--setopt=cachedir=${join(dir, 'dnf-cache')}`,
        `--repofrompath=tollgate,${ourRepo}`,
        '--repo=tollgate',
        ...args,
      ]);
      return stdout;
    };
    const nevras = (await dnf('repoquery', '--qf', '%{name}-%{epoch}:%{version}-%{release}.%{arch}')).trim().split('\n').sort();
    assert.equal(nevras.length, SPECS.length);
    assert.ok(nevras.includes('alpha-1:0.5-1.x86_64'));
    assert.ok(nevras.includes('epsilon-0:0.1^git20240101.abc-0.1.noarch'));
    const requires = (await dnf('repoquery', '--requires', 'beta')).trim().split('\n');
    assert.deepEqual(requires.sort(), ['/bin/sh', '/usr/sbin/useradd', 'coreutils'].sort());
    const files = (await dnf('repoquery', '-l', 'beta')).trim().split('\n');
    assert.ok(files.includes('/usr/share/doc/beta/README'), 'file list comes from filelists.xml');
    const changelog = await dnf('repoquery', '--changelog', 'gamma');
    assert.ok(changelog.includes('change 0 with <markup> & "quotes"'), changelog.slice(0, 300));
  });
});
