import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { parseXzLayout, xzBlocksOf, xzIndexAndFooter, XZ_HEADER_SIZE } from '../../../src/domain/repo/xz-container.js';

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
});
