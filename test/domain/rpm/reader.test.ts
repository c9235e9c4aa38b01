import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { readRpmPackage } from '../../../src/domain/rpm/reader.js';
import { iterateRpmPayload } from '../../../src/domain/rpm/payload.js';
import type { RpmDependency, RpmPackage } from '../../../src/domain/rpm/package.js';
import { buildRpm, type RpmSpec } from '../../../harness/rpms.js';
import { makeTempDir } from '../../helpers/tmp.js';

const run = promisify(execFile);

/** `rpm -qp --qf` on one package. */
async function rpmQuery(path: string, format: string): Promise<string> {
  const { stdout } = await run('rpm', ['-qp', '--nosignature', '--nodigest', '--qf', format, path], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

const SEP = '\u001f';
const RS = '\u001e';

/** Array tags queried side by side, one row per element (records split on RS, so newlines survive). */
async function rpmArray(path: string, fields: string[]): Promise<string[][]> {
  const out = await rpmQuery(path, `[${fields.map((f) => `%{${f}}`).join(SEP)}${RS}]`);
  return out === '' ? [] : out.replace(new RegExp(`${RS}$`), '').split(RS).map((row) => row.split(SEP));
}

const DEP_TAGS: Record<string, string> = {
  requires: 'REQUIRE',
  provides: 'PROVIDE',
  conflicts: 'CONFLICT',
  obsoletes: 'OBSOLETE',
  recommends: 'RECOMMEND',
  suggests: 'SUGGEST',
  supplements: 'SUPPLEMENT',
  enhances: 'ENHANCE',
};

function richSpec(compression: 'gzip' | 'xz' | 'zstd'): RpmSpec {
  return {
    name: `reader-${compression}`,
    version: '2.4.1~rc1',
    release: '3.el9',
    epoch: 7,
    arch: 'x86_64',
    summary: 'Ünïcode summary with <xml> & "quotes"',
    description: 'First line.\nSecond line with 100% coverage.',
    license: 'GPL-2.0-or-later AND MIT',
    url: 'https://example.org/reader',
    vendor: 'Tollgate Tests',
    packager: 'Test Packager <pkg@example.org>',
    group: 'Applications/System',
    requires: ['bash >= 4.0', 'libfoo.so.1()(64bit)', 'python3 < 4', 'pkg-eq = 1:2.0-1', '(alpha or beta >= 2)'],
    requiresPre: ['/usr/sbin/useradd', 'shadow-utils'],
    requiresPost: ['coreutils'],
    provides: ['reader-api = 3.1', 'bundled(zlib) = 1.2.13'],
    conflicts: ['reader-old < 2.0'],
    obsoletes: ['reader-legacy <= 1.9'],
    recommends: ['reader-docs'],
    suggests: ['reader-extras > 1'],
    supplements: ['reader-plugin'],
    enhances: ['reader-host >= 1.0'],
    files: {
      '/usr/bin/reader': { content: '#!/bin/sh\necho reader\n', mode: 0o755 },
      '/etc/reader/reader.conf': 'key = value\n',
      '/usr/share/reader/data.bin': Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 251)),
      '/usr/lib64/libreader.so.1': Buffer.alloc(1024, 1),
    },
    dirs: ['/usr/share/reader', '/var/lib/reader'],
    ghosts: ['/var/log/reader.log'],
    symlinks: { '/usr/bin/reader-link': 'reader' },
    payloadCompression: compression,
    changelog: [
      { date: new Date('2024-03-02T00:00:00Z'), author: 'Ann <ann@example.org> - 7:2.4.1~rc1-3', text: '- Fix <bug> & more' },
      { date: new Date('2024-03-01T00:00:00Z'), author: 'Bob <bob@example.org> - 7:2.4.0-1', text: '- Initial\n- second line' },
    ],
  };
}

async function expectMatchesRpm(path: string, pkg: RpmPackage): Promise<void> {
  const scalar = async (tag: string): Promise<string> => rpmQuery(path, `%{${tag}}`);
  const orEmpty = (v: string): string => (v === '(none)' ? '' : v);
  assert.equal(pkg.name, await scalar('NAME'));
  assert.equal(pkg.epoch === null ? '(none)' : String(pkg.epoch), await scalar('EPOCH'));
  assert.equal(pkg.version, await scalar('VERSION'));
  assert.equal(pkg.release, await scalar('RELEASE'));
  assert.equal(pkg.arch, await scalar('ARCH'));
  assert.equal(pkg.summary, await scalar('SUMMARY'));
  assert.equal(pkg.description, await scalar('DESCRIPTION'));
  assert.equal(pkg.license, await scalar('LICENSE'));
  assert.equal(pkg.url, orEmpty(await scalar('URL')));
  assert.equal(pkg.vendor, orEmpty(await scalar('VENDOR')));
  assert.equal(pkg.packager, orEmpty(await scalar('PACKAGER')));
  assert.equal(pkg.group, await scalar('GROUP'));
  assert.equal(String(pkg.buildTime), await scalar('BUILDTIME'));
  assert.equal(pkg.buildHost, await scalar('BUILDHOST'));
  assert.equal(pkg.sourceRpm, await scalar('SOURCERPM'));
  assert.equal(String(pkg.installedSize), await scalar('LONGSIZE'));
  assert.equal(String(pkg.archiveSize), await scalar('LONGARCHIVESIZE'));
  assert.equal(pkg.payloadCompressor, await scalar('PAYLOADCOMPRESSOR'));
  assert.equal(pkg.payloadFormat, await scalar('PAYLOADFORMAT'));
  assert.equal(pkg.headerSha256, await scalar('SHA256HEADER'));

  for (const [kind, prefix] of Object.entries(DEP_TAGS)) {
    const rows = await rpmArray(path, [`${prefix}NAME`, `${prefix}FLAGS`, `${prefix}VERSION`]);
    const ours = (pkg[kind as keyof RpmPackage] as RpmDependency[]).map((d) => [d.name, String(d.flags), d.evr]);
    assert.deepEqual(ours, rows, `${kind} match rpm`);
  }

  const files = await rpmArray(path, ['FILENAMES', 'FILEMODES', 'FILEFLAGS', 'LONGFILESIZES', 'FILELINKTOS', 'FILEDIGESTS']);
  assert.deepEqual(
    pkg.files.map((f) => [f.path, String(f.mode), String(f.flags), String(f.size), f.linkTo, f.digest]),
    files,
  );

  const changelog = await rpmArray(path, ['CHANGELOGTIME', 'CHANGELOGNAME', 'CHANGELOGTEXT']);
  assert.deepEqual(
    pkg.changelog.map((c) => [String(c.time), c.author, c.text]),
    changelog,
  );
}

describe('readRpmPackage', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => undefined;
  const built = new Map<string, string>();

  before(async () => {
    ({ dir, cleanup } = await makeTempDir());
    await Promise.all(
      (['gzip', 'xz', 'zstd'] as const).map(async (c) => built.set(c, await buildRpm(dir, richSpec(c)))),
    );
  });
  after(() => cleanup());

  for (const compression of ['gzip', 'xz', 'zstd'] as const) {
    it(`reads the same fields as rpm -qp (${compression} payload)`, async () => {
      const path = built.get(compression)!;
      const pkg = await readRpmPackage(path);
      await expectMatchesRpm(path, pkg);
      assert.equal(pkg.changelog[1]?.text, '- Initial\n- second line');
      assert.equal(pkg.isSource, false);
      assert.equal(pkg.packageSize > pkg.headerEnd, true);
      assert.deepEqual(
        pkg.files.filter((f) => f.type !== 'file').map((f) => [f.path, f.type]),
        [
          ['/usr/share/reader', 'dir'],
          ['/var/lib/reader', 'dir'],
          ['/var/log/reader.log', 'ghost'],
        ],
      );
      assert.ok(pkg.requires.some((d) => d.name === '/usr/sbin/useradd' && d.pre));
      assert.ok(pkg.requires.some((d) => d.name === 'coreutils' && d.pre));
      assert.ok(pkg.requires.some((d) => d.name === 'bash' && !d.pre));
    });

    it(`streams the payload files (${compression})`, async () => {
      const path = built.get(compression)!;
      const pkg = await readRpmPackage(path);
      const spec = richSpec(compression);
      const seen = new Map<string, Buffer>();
      for await (const { entry, content } of iterateRpmPayload(path, pkg)) {
        const chunks: Buffer[] = [];
        for await (const c of content) chunks.push(c);
        seen.set(entry.name, Buffer.concat(chunks));
        assert.equal(Buffer.concat(chunks).length, entry.size);
      }
      for (const [file, content] of Object.entries(spec.files ?? {})) {
        const expected = typeof content === 'string' ? Buffer.from(content) : Buffer.isBuffer(content) ? content : Buffer.from(content.content);
        assert.deepEqual(seen.get(file), expected, file);
      }
      // Ghosts are not in the payload; everything else is.
      const expectedNames = pkg.files.filter((f) => f.type !== 'ghost').map((f) => f.path).sort();
      assert.deepEqual([...seen.keys()].sort(), expectedNames);
    });
  }

  it('reports a package without epoch as null and a noarch package as such', async () => {
    const path = await buildRpm(dir, { name: 'plain', version: '1.0', arch: 'noarch', noAutoReqProv: true });
    const pkg = await readRpmPackage(path);
    assert.equal(pkg.epoch, null);
    assert.equal(pkg.arch, 'noarch');
    assert.deepEqual(pkg.files, []);
    assert.equal(await rpmQuery(path, '%{EPOCH}'), '(none)');
  });

  it('flags a source package', async () => {
    const specPath = join(dir, 'src.spec');
    await writeFile(specPath, 'Name: srcpkg\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n%description\nd\n%files\n');
    await run('rpmbuild', ['-bs', '--nodeps', '--quiet', '--define', `_topdir ${join(dir, 'srctop')}`, specPath]);
    const { stdout } = await run('find', [join(dir, 'srctop', 'SRPMS'), '-name', '*.src.rpm']);
    const pkg = await readRpmPackage(stdout.trim());
    assert.equal(pkg.isSource, true);
    assert.equal(pkg.name, 'srcpkg');
  });
});

/** The shared xz decoder currently refuses SHA-256 checked streams, which is what rpm writes. */
