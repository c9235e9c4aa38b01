import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, it } from 'node:test';
import { crc64, parseXzLayout, storedXzBlock, xzBlocksOf, xzIndexAndFooter, XZ_HEADER_SIZE } from '../../../src/domain/repo/xz-container.js';

const xz = (data: Buffer, args: string[] = ['-0', '-T1']) => execFileSync('xz', [...args, '--check=crc64', '-c'], { input: data });
const unxz = (data: Buffer) => execFileSync('xz', ['-dc'], { input: data, maxBuffer: 256 * 1024 * 1024 });

describe('xz container: appending blocks inside one stream', () => {
  it('reads the block records of streams made by xz (one block and many)', () => {
    const text = Buffer.from(randomBytes(300_000).toString('base64'));
    const single = parseXzLayout(xz(text));
    assert.equal(single.blocks.length, 1);
    assert.equal(single.blocks[0]!.uncompressedSize, text.length);
    const multi = parseXzLayout(xz(text, ['-0', '-T2', '--block-size=65536']));
    assert.ok(multi.blocks.length > 3);
    assert.equal(multi.blocks.reduce((n, b) => n + b.uncompressedSize, 0), text.length);
  });

  it('splices new blocks into a stream that xz then decodes and tests whole', () => {
    const parts = [Buffer.from('Package: a\n\n'), Buffer.from(randomBytes(50_000).toString('hex')), Buffer.from(''), Buffer.from('Package: z\n\n')];
    let file = xz(parts[0]!);
    for (const part of parts.slice(1)) {
      const base = parseXzLayout(file);
      const added = xzBlocksOf(xz(part));
      assert.ok(added.flags.equals(base.flags));
      file = Buffer.concat([file.subarray(0, base.indexOffset), added.bytes, xzIndexAndFooter([...base.blocks, ...added.records], base.flags)]);
      execFileSync('xz', ['-t'], { input: file });
    }
    assert.ok(unxz(file).equals(Buffer.concat(parts)));
    assert.equal(parseXzLayout(file).blocks.length, 3, 'the empty part adds no block');
  });

  it('rebuilds the same index and footer that xz wrote', () => {
    const file = xz(Buffer.from(randomBytes(100_000).toString('base64')), ['-0', '-T2', '--block-size=30000']);
    const layout = parseXzLayout(file);
    assert.ok(xzIndexAndFooter(layout.blocks, layout.flags).equals(file.subarray(layout.indexOffset)));
    assert.ok(layout.indexOffset > XZ_HEADER_SIZE);
  });

  it('refuses what is not a single xz stream', () => {
    assert.throws(() => parseXzLayout(Buffer.from('plain text, not xz at all')));
    const two = Buffer.concat([xz(Buffer.from('a')), xz(Buffer.from('b'))]);
    assert.doesNotThrow(() => parseXzLayout(two.subarray(two.length / 2)));
    assert.throws(() => parseXzLayout(Buffer.concat([xz(Buffer.from('a')), Buffer.from([0, 0, 0, 0])])));
  });

  it('computes CRC-64/XZ as xz does', () => {
    assert.equal(crc64(Buffer.from('123456789')).readBigUInt64LE(), 0x995dc9bbdf1939fan, 'the standard check value');
    assert.equal(crc64(Buffer.alloc(0)).readBigUInt64LE(), 0n);
    const text = Buffer.from(randomBytes(5_000).toString('hex'));
    const file = xz(text);
    const layout = parseXzLayout(file);
    const check = file.subarray(layout.indexOffset - 8, layout.indexOffset);
    assert.ok(check.equals(crc64(text)), 'the check xz wrote after the only block');
  });

  it('stores data in blocks that xz decodes and tests, alone and spliced after compressed ones', () => {
    const streamOf = (flags: Buffer, block: NonNullable<ReturnType<typeof storedXzBlock>>) => {
      const header = Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), flags, Buffer.alloc(4)]);
      header.writeUInt32LE(crc32(flags), 8);
      return Buffer.concat([header, block.bytes, xzIndexAndFooter(block.records, flags)]);
    };
    for (const size of [1, 3, 700, 65_535, 65_536, 65_537, 200_003]) {
      const data = Buffer.from(randomBytes(size));
      for (const flags of [Buffer.from([0, 0x04]), Buffer.from([0, 0x01])]) {
        const block = storedXzBlock(data, flags)!;
        const file = streamOf(flags, block);
        execFileSync('xz', ['-t'], { input: file });
        assert.ok(unxz(file).equals(data), `${size} bytes, check ${flags[1]}`);
      }
    }
    assert.equal(storedXzBlock(Buffer.alloc(0), Buffer.from([0, 0x04])), null);
    assert.equal(storedXzBlock(Buffer.from('x'), Buffer.from([0, 0x0a])), null, 'SHA-256 checks are left to liblzma');
    // As an append does: a compressed stream, then stanzas stored block by block.
    const parts = [Buffer.from('Package: a\nVersion: 1.5.0+ds1-1+b4\n\n'), Buffer.from('Package: b\nVersion: 2:1.0~rc1-1\n\n'), Buffer.from('Package: c\n\n')];
    let file = xz(parts[0]!);
    for (const part of parts.slice(1)) {
      const base = parseXzLayout(file);
      const added = storedXzBlock(part, base.flags)!;
      file = Buffer.concat([file.subarray(0, base.indexOffset), added.bytes, xzIndexAndFooter([...base.blocks, ...added.records], base.flags)]);
      execFileSync('xz', ['-t'], { input: file });
    }
    assert.ok(unxz(file).equals(Buffer.concat(parts)));
  });
});
