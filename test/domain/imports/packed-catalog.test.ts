/**
 * The packed catalog the resolver reads in memory: it must answer each name with the packages
 * and providers the database would, in catalog order, and give every record back byte for byte.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PackedCatalogBuilder, type CatalogRecord, type PackedCatalog } from '../../../src/domain/imports/packed-catalog.js';

const record = (seq: number, name: string, extra: Partial<CatalogRecord> = {}): CatalogRecord => ({
  seq, format: 'deb', name, version: `1.${seq}+ds1-1~bpo12+1`, arch: seq % 2 ? 'all' : 'amd64', location: `pool/main/${name[0]}/${name}_${seq}.deb`,
  size: 1000 + seq, sha256: String(seq).padStart(64, '0'), summary: `summary of ${name}`,
  relations: JSON.stringify({ depends: `libc6 (>= 2.36), ${name}-data`, preDepends: null, provides: null, multiArch: null }), ...extra,
});

function answers(packed: PackedCatalog, name: string) {
  const byName: number[] = [];
  const providers: Array<[number, string | null, number | null]> = [];
  packed.visit(name, (seq) => byName.push(seq), (seq, version, flags) => providers.push([seq, version, flags]));
  return { byName, providers };
}

describe('PackedCatalog', () => {
  it('answers a name with its packages and its providers in catalog order, and gives each record back as written', () => {
    const builder = new PackedCatalogBuilder();
    const records = [
      record(0, 'libfoo1'), record(1, 'mawk'), record(2, 'libfoo1', { version: '2:1.0-1' }), record(3, 'gawk'),
      // Non-ASCII text, and RPM-shaped fields.
      record(4, 'rpm-lib', { format: 'rpm', arch: 'x86_64', version: '1:2.0-3.el9', summary: 'Bibliothèque – ünïcode ✓' }),
    ];
    for (const r of records) builder.addPackage(r);
    // Provides rows arrive in index order (by name), not by seq: the answers still come in catalog order.
    builder.addProvided(3, 'awk', null, null);
    builder.addProvided(1, 'awk', null, null);
    builder.addProvided(4, '/usr/lib64/librpm-lib.so.2', null, null);
    builder.addProvided(4, 'bundled(zlib)', '1.2', 8);
    builder.addProvided(4, 'bundled(zlib)', '1.3', 8); // the same name twice from one package
    builder.addProvided(0, 'awk', '5', 8);
    const packed = builder.finish();

    assert.equal(packed.packages, records.length);
    assert.deepEqual(answers(packed, 'libfoo1'), { byName: [0, 2], providers: [] });
    assert.deepEqual(answers(packed, 'awk'), { byName: [], providers: [[0, '5', 8], [1, null, null], [3, null, null]] });
    assert.deepEqual(answers(packed, 'bundled(zlib)'), { byName: [], providers: [[4, '1.2', 8], [4, '1.3', 8]] });
    assert.deepEqual(answers(packed, '/usr/lib64/librpm-lib.so.2'), { byName: [], providers: [[4, null, null]] });
    assert.deepEqual(answers(packed, 'nowhere'), { byName: [], providers: [] });
    for (const r of records) assert.deepEqual(packed.record(r.seq), r);
    assert.ok(packed.bytes > 0);
  });

  it('keeps records whole across its blocks, one larger than a block included', () => {
    const builder = new PackedCatalogBuilder();
    const huge = JSON.stringify({ requires: [], provides: [], files: Array.from({ length: 40_000 }, (_, i) => `/usr/share/doc/huge/file-${i}.txt`) });
    const records = Array.from({ length: 6000 }, (_, seq) => record(seq, `pkg-${seq % 4000}`, seq === 2500 ? { relations: huge } : { summary: 'x'.repeat(seq % 700) }));
    for (const r of records) builder.addPackage(r);
    const packed = builder.finish();
    assert.ok(huge.length > 1 << 20);
    for (const r of records) assert.deepEqual(packed.record(r.seq), r);
    assert.deepEqual(answers(packed, 'pkg-10').byName, [10, 4010]);
    assert.deepEqual(answers(packed, 'pkg-3999').byName, [3999]);
  });

  it('refuses packages out of seq order and provides of a package it has not seen', () => {
    const builder = new PackedCatalogBuilder();
    assert.throws(() => builder.addPackage(record(1, 'a')), /out of order/);
    builder.addPackage(record(0, 'a'));
    assert.throws(() => builder.addProvided(1, 'b', null, null), /unknown catalog package 1/);
  });

  it('keeps no part of a larger string its names and versions were cut from (a sync\'s parsed index text)', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const used = () => {
      gc();
      return v8.getHeapStatistics().used_heap_size;
    };
    const before = used();
    // Joined, the text is one flat string on the heap (a Buffer's would be external, outside used_heap_size).
    let index: string | null = new Array<string>(32 << 10).fill('n'.repeat(1024)).join('');
    const builder = new PackedCatalogBuilder();
    for (let seq = 0; seq < 1000; seq++) {
      builder.addPackage(record(seq, index.slice(seq, seq + 40)));
      builder.addProvided(seq, index.slice(seq * 2, seq * 2 + 30), index.slice(seq, seq + 20), null);
    }
    index = null;
    const packed = builder.finish();
    assert.deepEqual(answers(packed, 'n'.repeat(40)).byName.length, 1000);
    assert.ok(used() - before < 8 << 20, `${((used() - before) / 2 ** 20).toFixed(1)} MiB still used: the 32 MiB index is kept alive`);
  });
});
