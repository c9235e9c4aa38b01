import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import tarStream from 'tar-stream';
import { parseControlStanza } from '../../../src/domain/deb/control.js';
import { AR_PREFIX_BYTES } from '../../../src/domain/deb/ar.js';
import { openArMember, readDebPackage, type DebPackage } from '../../../src/domain/deb/reader.js';
import { PackageFormatError } from '../../../src/domain/errors.js';
import { buildDeb, makeTar, writeArArchive, type RawArMember } from '../../../harness/debs.js';
import { makeTempDir } from '../../helpers/tmp.js';

const exec = promisify(execFile);
const COMPRESSIONS = ['gzip', 'xz', 'zstd', 'none'] as const;

let dir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir, cleanup } = await makeTempDir()));
after(() => cleanup());

function code(expected: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof PackageFormatError, `expected PackageFormatError, got ${String(error)}`);
    assert.equal(error.code, expected, error.message);
    return true;
  };
}

interface ListedFile {
  type: string;
  owner: string;
  size: number;
  path: string;
  target: string | null;
}

/** Parses `dpkg-deb -c` (tar -tv style) output. */
async function dpkgContents(deb: string): Promise<ListedFile[]> {
  const { stdout } = await exec('dpkg-deb', ['-c', deb]);
  return stdout
    .trim()
    .split('\n')
    .map((line) => {
      const match = /^(\S)\S+ (\S+)\s+(\d+) \S+ \S+ (.*)$/.exec(line);
      assert.ok(match, line);
      const [, type = '', owner = '', size = '0', rest = ''] = match;
      const link = type === 'l' ? rest.split(' -> ') : type === 'h' ? rest.split(' link to ') : [rest];
      return { type, owner, size: Number(size), path: link[0] ?? '', target: link[1] ?? null };
    });
}

const TYPE_LETTER: Record<string, string> = { file: '-', directory: 'd', symlink: 'l', link: 'h', fifo: 'p' };

/** The standard package used by the comparison tests. */
async function sampleDeb(compression: (typeof COMPRESSIONS)[number]): Promise<string> {
  return buildDeb(dir, {
    name: `sample-${compression}`,
    version: '2:1.4.2-1ubuntu0.3',
    source: 'sample-src (1.4.2-1ubuntu0.3)',
    depends: 'libc6 (>= 2.34), python3:any | python3-minimal',
    preDepends: 'dpkg (>= 1.19)',
    provides: 'sample-virtual (= 1.4)',
    multiArch: 'foreign',
    description: 'a sample package\nwith a long description\n\nand a paragraph',
    extraControl: { 'Installed-Size': '42', Homepage: 'https://example.invalid/' },
    files: {
      'usr/bin/sample': { content: '#!/bin/sh\necho hi\n', mode: 0o755 },
      'usr/share/doc/sample/README': 'read me\n',
      'etc/sample.conf': 'key=value\n',
      'usr/lib/sample/blob.bin': randomBytes(70_000),
    },
    symlinks: { 'usr/bin/sample-alias': 'sample' },
    conffiles: ['/etc/sample.conf'],
    scripts: { postinst: 'true' },
    md5sums: true,
    compression,
  });
}

describe('readDebPackage on real dpkg-deb output', () => {
  for (const compression of COMPRESSIONS) {
    it(`${compression}: control equals dpkg-deb -f, files equal dpkg-deb -c`, async () => {
      const deb = await sampleDeb(compression);
      const pkg = await readDebPackage(deb);
      assert.equal(pkg.name, `sample-${compression}`);
      assert.equal(pkg.version, '2:1.4.2-1ubuntu0.3');
      assert.equal(pkg.arch, 'amd64');
      assert.equal(pkg.sourceName, 'sample-src');
      assert.equal(pkg.sourceVersion, '1.4.2-1ubuntu0.3');
      assert.equal(pkg.installedSize, 42);
      assert.equal(pkg.multiArch, 'foreign');
      assert.equal(pkg.relations.depends, 'libc6 (>= 2.34), python3:any | python3-minimal');
      assert.equal(pkg.relations.preDepends, 'dpkg (>= 1.19)');
      assert.equal(pkg.relations.provides, 'sample-virtual (= 1.4)');
      assert.equal(pkg.relations.conflicts, null);
      assert.deepEqual(pkg.compression, { control: compression, data: compression });
      assert.equal(pkg.formatVersion, '2.0');
      assert.equal(pkg.hasMd5sums, true);
      assert.deepEqual(pkg.conffiles, ['/etc/sample.conf']);
      assert.deepEqual([...pkg.controlFiles].sort(), ['conffiles', 'control', 'md5sums', 'postinst']);

      const { stdout: fields } = await exec('dpkg-deb', ['-f', deb]);
      assert.deepEqual(pkg.control.fields, parseControlStanza(fields).fields);
      const { stdout: raw } = await exec('dpkg-deb', ['--ctrl-tarfile', deb], { encoding: 'buffer', maxBuffer: 1 << 24 }).then(() =>
        exec('sh', ['-c', 'dpkg-deb --ctrl-tarfile "$1" | tar -xOf - ./control', 'sh', deb]),
      );
      assert.equal(pkg.controlText, raw);

      const listed = await dpkgContents(deb);
      assert.deepEqual(
        pkg.files.map((f) => ({ type: TYPE_LETTER[f.type] ?? '?', owner: `${f.user}/${f.group}`, size: f.size, path: f.path, target: f.linkTarget })),
        listed,
      );
      const script = pkg.files.find((f) => f.installPath === '/usr/bin/sample');
      assert.equal(script?.mode, 0o755);
      assert.equal(pkg.files.find((f) => f.installPath === '/usr/bin/sample-alias')?.linkTarget, 'sample');
      assert.equal(pkg.files[0]?.installPath, '/');
    });
  }

  it('reports ar members whose bytes can be streamed (for the antivirus)', async () => {
    const deb = await sampleDeb('xz');
    const pkg = await readDebPackage(deb);
    assert.deepEqual(pkg.members.map((m) => m.name), ['debian-binary', 'control.tar.xz', 'data.tar.xz']);
    for (const member of pkg.members) {
      const { stdout } = await exec('ar', ['p', deb, member.name], { encoding: 'buffer', maxBuffer: 1 << 24 });
      assert.ok((await buffer(openArMember(deb, member))).equals(stdout), member.name);
    }
  });

  it('defaults source name and version to the binary ones; accepts arch all', async () => {
    const pkg = await readDebPackage(await buildDeb(dir, { name: 'plain', version: '0.1', arch: 'all', compression: 'gzip' }));
    assert.deepEqual([pkg.sourceName, pkg.sourceVersion, pkg.arch, pkg.installedSize], ['plain', '0.1', 'all', null]);
    const named = await readDebPackage(await buildDeb(dir, { name: 'bin-pkg', version: '3.0-1', source: 'srcname', compression: 'zstd' }));
    assert.deepEqual([named.sourceName, named.sourceVersion], ['srcname', '3.0-1']);
  });

  // An upload keeps its first bytes as it is received (hash-stream.ts `keepHead`): the format step
  // reads a tiny package from them without opening the file, and a larger one from them and the file.
  it('reads from the bytes an upload kept: a tiny package without its file, a real one with it, alike', async () => {
    const tiny = await sampleDeb('xz');
    const bytes = await readFile(tiny);
    const fromFile = await readDebPackage(tiny, {}, 'defer');
    const gone = join(dir, 'never-written.deb');
    assert.deepEqual(await readDebPackage(gone, {}, 'defer', { size: bytes.length, head: bytes }), fromFile, 'the whole package in memory: no file read');
    await assert.rejects(readDebPackage(gone, {}, 'defer', { size: bytes.length, head: bytes.subarray(0, 100) }), { code: 'ENOENT' });
    // Real packages from the APT cache, larger than what is kept: the rest comes from the file.
    const cache = '/var/cache/apt/archives';
    const real = (await readdir(cache).catch(() => [])).filter((f) => f.endsWith('.deb')).slice(0, 40).map((f) => join(cache, f));
    for (const path of real) {
      const whole = await readFile(path);
      const kept = whole.subarray(0, AR_PREFIX_BYTES);
      assert.deepEqual(await readDebPackage(path, {}, 'defer', { size: whole.length, head: kept }), await readDebPackage(path, {}, 'defer'), path);
    }
  });

  it('reads twenty packages quickly', async () => {
    const started = Date.now();
    const debs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => buildDeb(dir, { name: `many${i}`, version: `1.${i}`, compression: (['gzip', 'xz', 'zstd', 'none'] as const)[i % 4] })),
    );
    const pkgs = await Promise.all(debs.map((deb) => readDebPackage(deb)));
    assert.deepEqual(pkgs.map((p) => p.name), debs.map((_, i) => `many${i}`));
    assert.ok(Date.now() - started < 10_000);
  });
});

/** A valid control.tar.gz and data.tar.gz, to assemble broken archives from. */
async function parts(control = 'Package: broken\nVersion: 1.0\nArchitecture: amd64\nMaintainer: T <t@e.invalid>\nDescription: d\n'): Promise<{ control: Buffer; data: Buffer }> {
  return {
    control: await makeTar(dir, { control }, 'gzip'),
    data: await makeTar(dir, { 'usr/share/doc/broken/README': 'x' }, 'gzip'),
  };
}

async function assemble(name: string, members: RawArMember[]): Promise<string> {
  return writeArArchive(join(dir, name), members);
}

const DEBIAN_BINARY: RawArMember = { name: 'debian-binary', data: Buffer.from('2.0\n') };

/** A tar whose entries are given raw (tar-stream, so names are not sanitised like GNU tar does). */
async function rawTar(entries: Array<{ name: string; content?: string; type?: 'file' | 'symlink'; linkname?: string }>): Promise<Buffer> {
  const pack = tarStream.pack();
  for (const entry of entries) {
    pack.entry({ name: entry.name, type: entry.type ?? 'file', linkname: entry.linkname }, entry.content ?? '');
  }
  pack.finalize();
  return buffer(pack);
}

describe('readDebPackage on malformed packages', () => {
  it('not an ar archive / truncated archive', async () => {
    await writeFile(join(dir, 'plain.deb'), 'just text\n');
    await assert.rejects(readDebPackage(join(dir, 'plain.deb')), code('not_ar_archive'));
    const bytes = await readFile(await sampleDeb('gzip'));
    await writeFile(join(dir, 'truncated.deb'), bytes.subarray(0, Math.floor(bytes.length * 0.7)));
    await assert.rejects(readDebPackage(join(dir, 'truncated.deb')), code('truncated_archive'));
  });

  it('a directory entry declaring content is refused, not waited on for ever (found by fuzz/targets/deb-reader)', async () => {
    const input = new URL('../../../fuzz/corpus/deb-reader/directory-with-content', import.meta.url).pathname;
    const started = Date.now();
    await assert.rejects(readDebPackage(input), code('bad_tar_archive'));
    assert.ok(Date.now() - started < 5000);
  });

  it('a zstd member whose Huffman weights never end is refused, not decoded for ever (fzstd patched; found by fuzz/targets/deb-reader)', async () => {
    // Before the patch (patches/fzstd+0.1.1.patch) fzstd looped without end, blocking the event loop.
    const input = new URL('../../../fuzz/corpus/deb-reader/zstd-huffman-weights-loop', import.meta.url).pathname;
    await assert.rejects(readDebPackage(input), (error: unknown) => error instanceof PackageFormatError);
  });

  it('missing or misplaced members', async () => {
    const { control, data } = await parts();
    await assert.rejects(readDebPackage(await assemble('nobin.deb', [{ name: 'control.tar.gz', data: control }])), code('missing_debian_binary'));
    await assert.rejects(readDebPackage(await assemble('noctl.deb', [DEBIAN_BINARY, { name: 'data.tar.gz', data }])), code('missing_control_member'));
    await assert.rejects(readDebPackage(await assemble('nodata.deb', [DEBIAN_BINARY, { name: 'control.tar.gz', data: control }])), code('missing_data_member'));
    await assert.rejects(
      readDebPackage(await assemble('order.deb', [DEBIAN_BINARY, { name: 'data.tar.gz', data }, { name: 'control.tar.gz', data: control }])),
      code('missing_control_member'),
    );
    // '_' members are skipped, as dpkg does.
    const extra = await assemble('extra.deb', [DEBIAN_BINARY, { name: '_gpgorigin', data: Buffer.from('sig') }, { name: 'control.tar.gz', data: control }, { name: 'data.tar.gz', data }]);
    assert.equal((await readDebPackage(extra)).name, 'broken');
  });

  it('unsupported format version and compressions', async () => {
    const { control, data } = await parts();
    await assert.rejects(
      readDebPackage(await assemble('v3.deb', [{ name: 'debian-binary', data: Buffer.from('3.0\n') }, { name: 'control.tar.gz', data: control }, { name: 'data.tar.gz', data }])),
      code('unsupported_deb_version'),
    );
    await assert.rejects(
      readDebPackage(await assemble('bz2.deb', [DEBIAN_BINARY, { name: 'control.tar.gz', data: control }, { name: 'data.tar.bz2', data }])),
      code('unsupported_compression'),
    );
    await assert.rejects(
      readDebPackage(await assemble('lzma.deb', [DEBIAN_BINARY, { name: 'control.tar.lzma', data: control }, { name: 'data.tar.gz', data }])),
      code('unsupported_compression'),
    );
    await assert.rejects(
      readDebPackage(await assemble('proto.deb', [DEBIAN_BINARY, { name: 'control.tar.gz', data: control }, { name: 'data.tarvalueOf', data }])),
      code('unsupported_compression'),
    );
    // The name says xz, the bytes are not: a decoding error, not a crash.
    await assert.rejects(
      readDebPackage(await assemble('liar.deb', [DEBIAN_BINARY, { name: 'control.tar.xz', data: control }, { name: 'data.tar.gz', data }])),
      code('decompression_failed'),
    );
  });

  it('oversized control member, oversized control file, missing control file', async () => {
    const { data } = await parts();
    const bigMember = await assemble('bigctl.deb', [DEBIAN_BINARY, { name: 'control.tar', data: Buffer.alloc(64 * 1024) }, { name: 'data.tar.gz', data }]);
    await assert.rejects(readDebPackage(bigMember, { maxControlMemberBytes: 32 * 1024 }), code('control_too_large'));
    const hugeDescription = `Package: big\nVersion: 1\nArchitecture: amd64\nDescription: d\n${' x\n'.repeat(600_000)}`;
    const bigControl = await assemble('bigfile.deb', [DEBIAN_BINARY, { name: 'control.tar.gz', data: await makeTar(dir, { control: hugeDescription }) }, { name: 'data.tar.gz', data }]);
    await assert.rejects(readDebPackage(bigControl), code('control_too_large'));
    const noControl = await assemble('noctlfile.deb', [DEBIAN_BINARY, { name: 'control.tar.gz', data: await makeTar(dir, { md5sums: '' }) }, { name: 'data.tar.gz', data }]);
    await assert.rejects(readDebPackage(noControl), code('missing_control_file'));
  });

  it('bad names, versions, architectures and fields in control', async () => {
    const cases: Array<[string, string]> = [
      ['Package: Bad_Name\nVersion: 1.0\nArchitecture: amd64\n', 'invalid_package_name'],
      ['Package: ../../etc\nVersion: 1.0\nArchitecture: amd64\n', 'invalid_package_name'],
      ['Package: a/b\nVersion: 1.0\nArchitecture: amd64\n', 'invalid_package_name'],
      ['Package: ok\nVersion: one\nArchitecture: amd64\n', 'invalid_version'],
      ['Package: ok\nVersion: 1.0/../x\nArchitecture: amd64\n', 'invalid_version'],
      ['Package: ok\nVersion: 1.0\nArchitecture: AMD64\n', 'invalid_architecture'],
      ['Package: ok\nSource: ../x\nVersion: 1.0\nArchitecture: amd64\n', 'invalid_package_name'],
      ['Version: 1.0\nArchitecture: amd64\n', 'bad_control_field'],
      ['Package: ok\nArchitecture: amd64\n', 'bad_control_field'],
      ['Package: ok\nVersion: 1.0\nArchitecture: amd64\nDepends: libc6 (>= \n', 'bad_control_field'],
      ['Package: ok\nVersion: 1.0\nArchitecture: amd64\nInstalled-Size: lots\n', 'bad_control_field'],
      ['Package: ok\nPackage: ok2\nVersion: 1.0\nArchitecture: amd64\n', 'bad_control_field'],
      ['Package: ok\nVersion: 1.0\n continuation\nArchitecture: amd64\n', 'bad_control_field'],
      ['Package: ok\nVersion: 1.0\nArchitecture: amd64\n\nPackage: second\n', 'bad_control_syntax'],
      ['not a control file at all', 'bad_control_syntax'],
    ];
    const { data } = await parts();
    for (const [i, [control, expected]] of cases.entries()) {
      const deb = await assemble(`ctl${i}.deb`, [DEBIAN_BINARY, { name: 'control.tar.gz', data: await makeTar(dir, { control }) }, { name: 'data.tar.gz', data }]);
      await assert.rejects(readDebPackage(deb), code(expected), control);
    }
  });

  it('also rejects bad names in packages built by dpkg-deb --nocheck', async () => {
    const deb = await buildDeb(dir, { name: 'UPPER', version: '1.0', nocheck: true, fileName: 'upper.deb' });
    await assert.rejects(readDebPackage(deb), code('invalid_package_name'));
  });

  it('data.tar entries escaping the root, too many entries, corrupt tar', async () => {
    const { control } = await parts();
    const escaping = await assemble('escape.deb', [DEBIAN_BINARY, { name: 'control.tar.gz', data: control }, { name: 'data.tar', data: await rawTar([{ name: './usr/../../etc/passwd', content: 'x' }]) }]);
    await assert.rejects(readDebPackage(escaping), code('unsafe_file_path'));
    const many = await assemble('many.deb', [
      DEBIAN_BINARY,
      { name: 'control.tar.gz', data: control },
      { name: 'data.tar', data: await rawTar(Array.from({ length: 50 }, (_, i) => ({ name: `./f${i}` }))) },
    ]);
    await assert.rejects(readDebPackage(many, { maxDataEntries: 20 }), code('too_many_files'));
    assert.equal((await readDebPackage(many)).files.length, 50);
    const garbage = await assemble('garbage.deb', [DEBIAN_BINARY, { name: 'control.tar.gz', data: control }, { name: 'data.tar', data: randomBytes(4096) }]);
    await assert.rejects(readDebPackage(garbage), code('bad_tar_archive'));
    const cutTar = (await rawTar([{ name: './a', content: 'x'.repeat(5000) }])).subarray(0, 2048);
    const cut = await assemble('cut-tar.deb', [DEBIAN_BINARY, { name: 'control.tar.gz', data: control }, { name: 'data.tar', data: cutTar }]);
    await assert.rejects(readDebPackage(cut), code('bad_tar_archive'));
  });

  it('a decompression bomb in data.tar (256 MiB of zeros) is stopped quickly', async () => {
    const { control } = await parts();
    await exec('sh', ['-c', `cd "$1" && head -c 268435456 /dev/zero > zeros && tar -c zeros | zstd -q -19 > bomb.tar.zst && rm zeros`, 'sh', dir]);
    const deb = await assemble('bomb.deb', [DEBIAN_BINARY, { name: 'control.tar.gz', data: control }, { name: 'data.tar.zst', data: await readFile(join(dir, 'bomb.tar.zst')) }]);
    const started = Date.now();
    await assert.rejects(readDebPackage(deb), code('decompression_bomb'));
    assert.ok(Date.now() - started < 3000, `${Date.now() - started} ms`);
    // With limits that allow it, the same package reads fine: the limit is what stopped it.
    const pkg = await readDebPackage(deb, { maxRatio: 1_000_000 });
    assert.equal(pkg.files[0]?.size, 268435456);
  });

  it('random corruption never escapes as anything but PackageFormatError, and never hangs', async () => {
    const originals = await Promise.all(
      COMPRESSIONS.map(async (compression) =>
        readFile(await buildDeb(dir, { name: `fuzz-${compression}`, version: '1.0', compression, files: { 'usr/x': randomBytes(3000), 'usr/y': 'text '.repeat(500) } })),
      ),
    );
    let seed = 12345;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 200; round += 1) {
      const original = originals[round % originals.length]!;
      const bytes = Buffer.from(original);
      const flips = 1 + Math.floor(random() * 4);
      for (let i = 0; i < flips; i += 1) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      const file = join(dir, 'fuzz.deb');
      await writeFile(file, round % 7 === 0 ? bytes.subarray(0, Math.floor(random() * bytes.length)) : bytes);
      let outcome: string;
      try {
        const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('hang')), 5000).unref());
        const pkg: DebPackage = await Promise.race([readDebPackage(file), timeout]);
        outcome = pkg.name.startsWith('fuzz-') ? 'ok' : 'ok-renamed';
      } catch (error) {
        assert.ok(error instanceof PackageFormatError, `round ${round}: ${String(error)}`);
        outcome = error.code;
      }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    assert.ok(outcomes.size > 3, JSON.stringify([...outcomes]));
  });
});

describe('buildDeb helper', () => {
  it('is reproducible: same spec, same bytes; different content, different bytes', async () => {
    const hash = async (path: string): Promise<string> => createHash('sha256').update(await readFile(path)).digest('hex');
    const a = await hash(await buildDeb(dir, { name: 'repro', version: '1', fileName: 'a.deb' }));
    const b = await hash(await buildDeb(dir, { name: 'repro', version: '1', fileName: 'b.deb' }));
    const c = await hash(await buildDeb(dir, { name: 'repro', version: '1', fileName: 'c.deb', files: { 'usr/x': 'other' } }));
    assert.equal(a, b);
    assert.notEqual(a, c);
  });
});
