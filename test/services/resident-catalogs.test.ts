import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Db } from '../../src/adapters/db/index.js';
import { ResidentCatalogs, type CatalogPacker } from '../../src/services/imports/resident-catalogs.js';

// Packers made for a sync never read the database.
const noDb = null as unknown as Db;

/** Packages `from`…`from + count - 1` of a catalog (sequence numbers in order from 0). */
function addPackages(packer: CatalogPacker, from: number, count: number): void {
  for (let seq = from; seq < from + count; seq += 1) {
    packer.add(seq, 'deb', `libexample${seq}`, `1.5.0+ds1-${seq}+b4`, 'amd64', `pool/main/l/libexample${seq}/libexample${seq}_1.5.0+ds1-${seq}+b4_amd64.deb`, 1000 + seq, 'a'.repeat(64), `example library ${seq}`, '[]');
  }
}

/** Bytes 200 packages take packed, alone. */
function bytesOf200(): number {
  const alone = new ResidentCatalogs(noDb, { budget: 2 ** 30 });
  const packer = alone.packer('alone', 1)!;
  addPackages(packer, 0, 200);
  return packer.finish()!.bytes;
}

describe('catalogs held in memory', () => {
  it('two syncs packing at once share the budget: one is held, the other refused, never both over it', () => {
    const budget = Math.round(bytesOf200() * 1.5);
    const resident = new ResidentCatalogs(noDb, { budget });
    const a = resident.packer('a', 1)!;
    const b = resident.packer('b', 1)!;
    for (let from = 0; from < 200; from += 10) {
      addPackages(a, from, 10);
      addPackages(b, from, 10);
    }
    const held = [a.finish(), b.finish()].filter((c) => c !== null);
    assert.equal(held.length, 1, 'each alone fits; both together do not');
    assert.ok(resident.bytes <= budget, `${resident.bytes} held, budget ${budget}`);
    assert.ok(resident.get('a', 1), 'the one that went first is held');
    assert.equal(resident.get('b', 1), undefined);
  });

  it('a packer abandoned, refused or finished gives its room back', () => {
    const budget = Math.round(bytesOf200() * 1.5);
    const resident = new ResidentCatalogs(noDb, { budget });
    const aborted = resident.packer('a', 1)!;
    addPackages(aborted, 0, 200);
    aborted.abandon();
    const next = resident.packer('b', 1)!;
    addPackages(next, 0, 200);
    assert.ok(next.finish(), 'the aborted sync no longer counts');
    // The source's older generation is replaced by its new one: it does not count against it.
    const again = resident.packer('b', 2)!;
    addPackages(again, 0, 200);
    assert.ok(again.finish());
    assert.ok(resident.get('b', 2));
    assert.ok(resident.bytes <= budget);
  });
});
