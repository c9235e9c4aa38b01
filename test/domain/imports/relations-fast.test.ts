/**
 * The resolver's fast reading of relation fields (parseRelationsFast) against parseRelations:
 * equal groups whenever it answers, and no answer (so parseRelations reads it, errors included)
 * for anything outside the common shape; checked on crafted fields and on every Depends,
 * Pre-Depends and Provides of the machine's APT lists (skipped when absent).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { parseRelations } from '../../../src/domain/deb/relations.js';
import { debEntryBatches } from '../../../src/domain/imports/deb822-stream.js';
import { parseRelationsFast } from '../../../src/domain/imports/resolve-formats.js';
import type { DebCatalogRelations } from '../../../src/domain/imports/catalog.js';

function agrees(field: string): 'fast' | 'fallback' {
  const fast = parseRelationsFast(field);
  if (fast === null) return 'fallback';
  assert.deepEqual(fast, parseRelations(field, 'Depends'), JSON.stringify(field));
  return 'fast';
}

const READ_FAST = [
  'libc6', 'libc6 (>= 2.34)', 'libc6 (>= 2.34), libgcc-s1 (>= 3.0)', 'a | b, c (<< 2:1.0~rc1-1+b2) | d:any, e:amd64 (= 1.0)',
  'python3:any', 'python3:any (>= 3.11~)', 'foo(>=1)', 'foo:any(>= 1)', 'foo ( >= 1 )', 'foo (>=1 )', 'foo ( >=1)',
  'x (< 1), y (> 2), z (<= 3), w (>> 4), v (= 5)', 'g++-12 (>= 12.2.0-14)', 'lib.x+y-z0 (>= 0:1.2.3+dfsg-1~bpo12+1)',
];
const FALL_BACK = [
  '', ' ', 'a,', ',a', 'a,,b', 'a, ,b', 'a |', '| a', 'a || b', ' a', 'a ', 'a  (>= 1)', 'a\t(>= 1)', 'a,\n b', 'a\u00a0(>= 1)',
  'A', 'a_b', 'a:', 'a :any', 'a: any', 'a:Any', 'a:any+', 'a:b:c', 'a (>= 1', 'a >= 1', 'a (=> 1)', 'a (=< 1)', 'a (>=>= 1)', 'a (>= )',
  'a ()', 'a (>= 1 2)', 'a (>= 1) x', 'a (>= 1))', 'a (>= a1)', 'a (>= 1:)', 'a (>= 1-)', 'a (>= -1)', 'a [amd64]', 'a <!nocheck>',
  'a (>= 1) [amd64] <stage1>', 'é', 'a (>= 1(2)', 'a)', 'a(', '(a)', 'a b',
];

describe('relation fields: the resolver\'s fast reading agrees with parseRelations', () => {
  it('reads the common shapes itself, with the same groups', () => {
    for (const field of READ_FAST) assert.equal(agrees(field), 'fast', JSON.stringify(field));
  });

  it('reads a group once: fields that contain it share its parsed form', () => {
    const first = parseRelationsFast('libshared-fast1 (>= 2.34), libother-fast1 | libalt-fast1')!;
    const second = parseRelationsFast('libalt-fast1, libother-fast1 | libalt-fast1, libshared-fast1 (>= 2.34)')!;
    assert.equal(second[2], first[0]);
    assert.equal(second[1], first[1]);
    assert.notEqual(second[0], first[1]);
    assert.deepEqual(second, parseRelations('libalt-fast1, libother-fast1 | libalt-fast1, libshared-fast1 (>= 2.34)', 'Depends'));
  });

  it('leaves everything else to parseRelations (same result or the same error)', () => {
    for (const field of FALL_BACK) assert.equal(agrees(field), 'fallback', JSON.stringify(field));
  });

  const lists = '/var/lib/apt/lists';
  const real = existsSync(lists) ? readdirSync(lists).filter((f) => /_Packages(\.lz4)?$/.test(f)) : [];
  it('agrees on every Depends, Pre-Depends and Provides of the machine\'s APT lists', { skip: real.length === 0 ? 'no APT lists on this machine' : false }, async () => {
    const decode = async function* (stream: Readable): AsyncGenerator<string> {
      const decoder = new StringDecoder('utf8');
      for await (const chunk of stream) yield decoder.write(chunk as Buffer);
      yield decoder.end();
    };
    let fast = 0;
    let total = 0;
    for (const file of real) {
      const stream = file.endsWith('.lz4') ? spawn('lz4', ['-dc', join(lists, file)]).stdout : createReadStream(join(lists, file));
      for await (const batch of debEntryBatches(decode(stream))) {
        for (const entry of batch) {
          const rel = entry.relations as DebCatalogRelations;
          for (const field of [rel.depends, rel.preDepends, rel.provides]) {
            if (field === null) continue;
            total += 1;
            if (agrees(field) === 'fast') fast += 1;
          }
        }
      }
    }
    // The fast reading is the one used: nearly every real field has the common shape.
    assert.ok(fast > total * 0.95, `${fast} of ${total} read fast`);
  });
});
