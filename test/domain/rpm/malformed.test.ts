import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { DomainError, PackageFormatError } from '../../../src/domain/errors.js';
import { iterateRpmPayload, openRpmPayload } from '../../../src/domain/rpm/payload.js';
import { readRpmPackage } from '../../../src/domain/rpm/reader.js';
import { RpmType, Tag } from '../../../src/domain/rpm/tags.js';
import { buildRpm } from '../../../harness/rpms.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { basicMainEntries, buildHeader, buildLead, buildRpmFile } from './synthetic.js';

let dir = '';
let cleanup: () => Promise<void> = async () => undefined;
let counter = 0;

async function writeTemp(data: Buffer): Promise<string> {
  const path = join(dir, `case-${counter++}.rpm`);
  await writeFile(path, data);
  return path;
}

/** Reads `data` as a package and returns the PackageFormatError code (fails on success or other errors). */
async function codeOf(data: Buffer): Promise<string> {
  const path = await writeTemp(data);
  try {
    await readRpmPackage(path);
  } catch (e) {
    assert.ok(e instanceof PackageFormatError, `expected PackageFormatError, got ${String(e)}`);
    return e.code;
  }
  assert.fail('the malformed package was accepted');
}

/** Drains a package's payload through the cpio reader; returns the error code, or 'ok'. */
async function payloadCode(path: string, limits?: { maxOutputBytes: number; maxRatio: number }): Promise<string> {
  try {
    const pkg = await readRpmPackage(path);
    for await (const { content } of iterateRpmPayload(path, pkg, limits)) for await (const c of content) void c;
    return 'ok';
  } catch (e) {
    assert.ok(e instanceof DomainError, `expected a DomainError, got ${String(e)}`);
    return e.code;
  }
}

/** A newc cpio archive of regular files. */
function cpio(files: Record<string, Buffer>): Buffer {
  const parts: Buffer[] = [];
  const pad = (n: number): Buffer => Buffer.alloc((4 - (n % 4)) % 4);
  const member = (name: string, data: Buffer, mode: number): void => {
    const fields = [1, mode, 0, 0, 1, 0, data.length, 0, 0, 0, 0, name.length + 1, 0];
    const header = `070701${fields.map((f) => f.toString(16).padStart(8, '0')).join('')}${name}\0`;
    parts.push(Buffer.from(header, 'latin1'), pad(header.length), data, pad(data.length));
  };
  for (const [name, data] of Object.entries(files)) member(`.${name}`, data, 0o100644);
  member('TRAILER!!!', Buffer.alloc(0), 0);
  return Buffer.concat(parts);
}

describe('malformed RPM input', () => {
  let good = Buffer.alloc(0);
  let goodPath = '';

  before(async () => {
    ({ dir, cleanup } = await makeTempDir());
    goodPath = await buildRpm(dir, { name: 'victim', version: '1.0', files: { '/usr/bin/victim': 'x'.repeat(5000) } });
    good = await readFile(goodPath);
  });
  after(() => cleanup());

  it('accepts the untouched package and a synthetic one', async () => {
    assert.equal((await readRpmPackage(goodPath)).name, 'victim');
    const synthetic = await readRpmPackage(await writeTemp(buildRpmFile()));
    assert.equal(synthetic.name, 'synthetic');
    assert.equal(synthetic.summary, 'A synthetic package');
  });

  it('rejects files that are not RPMs', async () => {
    assert.equal(await codeOf(Buffer.alloc(0)), 'not_rpm');
    assert.equal(await codeOf(Buffer.from('!<arch>\ndebian-binary   ')), 'not_rpm');
    const wrongMagic = Buffer.from(good);
    wrongMagic[0] = 0;
    assert.equal(await codeOf(wrongMagic), 'not_rpm');
  });

  it('rejects truncated packages at every stage', async () => {
    const pkg = await readRpmPackage(goodPath);
    for (const cut of [4, 50, 96, 100, 112, 200, pkg.headerStart - 1, pkg.headerStart + 8, pkg.headerStart + 40, pkg.headerEnd - 1]) {
      assert.equal(await codeOf(good.subarray(0, cut)), 'truncated_header', `cut at ${cut}`);
    }
  });

  it('rejects a payload cut short', async () => {
    const pkg = await readRpmPackage(goodPath);
    const path = await writeTemp(good.subarray(0, pkg.headerEnd + 20));
    assert.notEqual(await payloadCode(path), 'ok');
  });

  it('rejects wrong header magics and unsupported signature types', async () => {
    const sigMagic = Buffer.from(good);
    sigMagic[96] = 0x00;
    assert.equal(await codeOf(sigMagic), 'bad_header_magic');
    const pkg = await readRpmPackage(goodPath);
    const mainMagic = Buffer.from(good);
    mainMagic[pkg.headerStart + 1] = 0x00;
    assert.equal(await codeOf(mainMagic), 'bad_header_magic');
    const lead = buildLead();
    lead.writeUInt16BE(1, 78);
    assert.equal(await codeOf(buildRpmFile({ lead })), 'unsupported_signature_type');
  });

  it('rejects absurd index counts and store sizes', async () => {
    const pkg = await readRpmPackage(goodPath);
    const patch = (at: number, value: number): Buffer => {
      const b = Buffer.from(good);
      b.writeUInt32BE(value, at);
      return b;
    };
    assert.equal(await codeOf(patch(96 + 8, 0xffffffff)), 'bad_header_index');
    assert.equal(await codeOf(patch(96 + 8, 0)), 'bad_header_index');
    assert.equal(await codeOf(patch(96 + 12, 0xfffffff0)), 'header_too_large');
    assert.equal(await codeOf(patch(pkg.headerStart + 8, 70_000)), 'bad_header_index');
    assert.equal(await codeOf(patch(pkg.headerStart + 12, 0x7fffffff)), 'header_too_large');
    // Within the cap but beyond the end of the file.
    assert.equal(await codeOf(patch(pkg.headerStart + 12, 32 * 1024 * 1024)), 'truncated_header');
  });

  it('rejects index entries with absurd offsets, counts or types', async () => {
    const main = (extra: Parameters<typeof basicMainEntries>[0]): Buffer => buildRpmFile({ main: buildHeader(basicMainEntries(extra)) });
    assert.equal(await codeOf(main([{ tag: Tag.LICENSE, type: RpmType.STRING, value: 'MIT', offset: 0x7fffffff }])), 'bad_header_index');
    assert.equal(await codeOf(main([{ tag: Tag.FILEMODES, type: RpmType.INT16, value: [1, 2], count: 0x10000000 }])), 'bad_header_index');
    assert.equal(await codeOf(main([{ tag: Tag.FILEMODES, type: RpmType.INT16, value: [1, 2], count: 5000 }])), 'bad_header_index');
    assert.equal(await codeOf(main([{ tag: Tag.LICENSE, type: 99, value: [1, 2, 3] }])), 'bad_header_index');
    assert.equal(await codeOf(main([{ tag: Tag.LICENSE, type: RpmType.STRING, value: 'MIT', count: 0 }])), 'bad_header_index');
  });

  it('rejects strings without terminator and tags of the wrong type', async () => {
    const entries = basicMainEntries();
    const header = buildHeader(entries);
    header[header.length - 1] = 0x41; // the last string loses its NUL
    assert.equal(await codeOf(buildRpmFile({ main: header })), 'bad_header_index');
    const wrongType = basicMainEntries().map((e) => (e.tag === Tag.NAME ? { ...e, type: RpmType.INT32, value: [7] } : e));
    assert.equal(await codeOf(buildRpmFile({ main: buildHeader(wrongType) })), 'bad_header_value');
    const noName = basicMainEntries().filter((e) => e.tag !== Tag.NAME);
    assert.equal(await codeOf(buildRpmFile({ main: buildHeader(noName) })), 'missing_tag');
  });

  it('rejects inconsistent file lists and dependency arrays', async () => {
    const files = [
      { tag: Tag.BASENAMES, type: RpmType.STRING_ARRAY, value: ['a', 'b'] },
      { tag: Tag.DIRNAMES, type: RpmType.STRING_ARRAY, value: ['/usr/'] },
      { tag: Tag.DIRINDEXES, type: RpmType.INT32, value: [0, 9] },
    ];
    assert.equal(await codeOf(buildRpmFile({ main: buildHeader(basicMainEntries(files)) })), 'bad_file_list');
    const deps = [
      { tag: Tag.REQUIRENAME, type: RpmType.STRING_ARRAY, value: ['a', 'b'] },
      { tag: Tag.REQUIREFLAGS, type: RpmType.INT32, value: [0] },
    ];
    assert.equal(await codeOf(buildRpmFile({ main: buildHeader(basicMainEntries(deps)) })), 'bad_dependency');
  });

  it('refuses entries that overlap to multiply memory', async () => {
    // One region of 200,000 short strings, and every string-array tag pointing at it.
    const names = Array.from({ length: 200_000 }, (_, i) => `n${i}`);
    const region = { tag: Tag.BASENAMES, type: RpmType.STRING_ARRAY, value: names };
    const header = buildHeader(basicMainEntries([region]));
    const indexCount = header.readUInt32BE(8);
    const regionIndex = indexCount - 1;
    const regionOffset = header.readUInt32BE(16 + regionIndex * 16 + 8);
    const aliases = [Tag.DIRNAMES, Tag.FILEDIGESTS, Tag.FILELINKTOS, Tag.PROVIDENAME, Tag.REQUIRENAME, Tag.CONFLICTNAME];
    const extra = aliases.map((tag) => {
      const e = Buffer.alloc(16);
      e.writeUInt32BE(tag, 0);
      e.writeUInt32BE(RpmType.STRING_ARRAY, 4);
      e.writeUInt32BE(regionOffset, 8);
      e.writeUInt32BE(names.length, 12);
      return e;
    });
    const intro = Buffer.from(header.subarray(0, 16));
    intro.writeUInt32BE(indexCount + aliases.length, 8);
    const rebuilt = Buffer.concat([intro, header.subarray(16, 16 + indexCount * 16), ...extra, header.subarray(16 + indexCount * 16)]);
    assert.equal(await codeOf(buildRpmFile({ main: rebuilt })), 'bad_header_index');
  });

  it('never crashes or hangs on randomly corrupted headers', async () => {
    const pkg = await readRpmPackage(goodPath);
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 400; i++) {
      const b = Buffer.from(good);
      const flips = 1 + rand(8);
      for (let f = 0; f < flips; f++) b[rand(pkg.headerEnd)] = rand(256);
      const path = await writeTemp(b);
      try {
        await readRpmPackage(path);
        outcomes.set('ok', (outcomes.get('ok') ?? 0) + 1);
      } catch (e) {
        assert.ok(e instanceof PackageFormatError, `iteration ${i}: ${String(e)}`);
        outcomes.set(e.code, (outcomes.get(e.code) ?? 0) + 1);
      }
    }
    assert.ok(outcomes.size > 2, `varied outcomes: ${JSON.stringify([...outcomes])}`);
  });

  it('stops payload bombs and bad archives', async () => {
    const main = buildHeader(basicMainEntries());
    // 100 MiB of zeros in ~100 KiB of gzip: far beyond the default ratio, as a file in the archive...
    const bomb = await writeTemp(buildRpmFile({ main, payload: gzipSync(cpio({ '/zeros': Buffer.alloc(100 * 1024 * 1024) })) }));
    assert.equal(await payloadCode(bomb), 'decompression_bomb');
    // ...and read raw, without the archive reader.
    const raw = openRpmPayload(bomb, await readRpmPackage(bomb));
    await assert.rejects(
      (async () => {
        for await (const chunk of raw) void chunk;
      })(),
      (e: unknown) => e instanceof PackageFormatError && e.code === 'decompression_bomb',
    );
    // An ordinary archive above an explicit size cap.
    const big = await writeTemp(buildRpmFile({ main, payload: gzipSync(cpio({ '/big': Buffer.alloc(2 * 1024 * 1024, 1) })) }));
    assert.equal(await payloadCode(big, { maxOutputBytes: 1024 * 1024, maxRatio: 1e9 }), 'decompression_bomb');
    assert.equal(await payloadCode(big), 'ok');
    const garbage = await writeTemp(buildRpmFile({ main, payload: gzipSync(Buffer.from('this is not a cpio archive at all, no, not at all'.repeat(10))) }));
    assert.equal(await payloadCode(garbage), 'bad_payload_archive');
    const notGzip = await writeTemp(buildRpmFile({ main, payload: Buffer.from('plain bytes, not gzip') }));
    assert.notEqual(await payloadCode(notGzip), 'ok');
    const withoutTrailer = cpio({ '/a': Buffer.from('abc') });
    const cut = await writeTemp(buildRpmFile({ main, payload: gzipSync(withoutTrailer.subarray(0, withoutTrailer.length - 130)) }));
    assert.equal(await payloadCode(cut), 'truncated_payload');
  });

  it('refuses payload compressors it cannot decode, before reading', async () => {
    const main = buildHeader(basicMainEntries().map((e) => (e.tag === Tag.PAYLOADCOMPRESSOR ? { ...e, value: 'bzip2' } : e)));
    const path = await writeTemp(buildRpmFile({ main }));
    const pkg = await readRpmPackage(path);
    assert.throws(() => openRpmPayload(path, pkg), (e: unknown) => e instanceof PackageFormatError && e.code === 'unsupported_payload_compressor');
  });
});
