/**
 * Two files of one folder with the same bytes (two architectures' empty Contents, say) are placed
 * as the same by-hash object side by side. Placing one must never take the object away while the
 * other links its other digest names to it: a rename over the object unlinked the inode the
 * other placement had just looked up, and its link failed with ENOENT (seen as a 500 on
 * POST /distributions in a CI run).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { placeObject, pruneByHash } from '../../../src/adapters/storage/apt-by-hash.js';
import { tempPathFor } from '../../../src/adapters/storage/temp-names.js';
import { makeTempDir } from '../../helpers/tmp.js';

const digests = (bytes: Buffer) => ({
  size: bytes.length,
  md5: createHash('md5').update(bytes).digest('hex'),
  sha1: createHash('sha1').update(bytes).digest('hex'),
  sha256: createHash('sha256').update(bytes).digest('hex'),
  sha512: createHash('sha512').update(bytes).digest('hex'),
});

describe('placing by-hash objects', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  before(async () => {
    tmp = await makeTempDir('tollgate-by-hash-');
  });
  after(() => tmp.cleanup());

  it('places identical files side by side, every digest name the object, no temp file left', async () => {
    for (let round = 0; round < 300; round++) {
      const dir = join(tmp.dir, `round-${round}`);
      const bytes = Buffer.from(`same content ${round}\n`);
      const d = digests(bytes);
      const temps = await Promise.all([0, 1, 2].map(async () => {
        const temp = tempPathFor(join(dir, 'by-hash', 'SHA256', 'Contents-x.gz'));
        await mkdir(join(dir, 'by-hash', 'SHA256'), { recursive: true });
        await writeFile(temp, bytes);
        return temp;
      }));
      const placed = await Promise.all(temps.map((temp) => placeObject(dir, temp, d)));
      assert.deepEqual(new Set(placed), new Set([join(dir, 'by-hash', 'SHA256', d.sha256)]));
      const object = await stat(placed[0]!);
      for (const [folder, hex] of [['MD5Sum', d.md5], ['SHA1', d.sha1], ['SHA512', d.sha512]] as const) {
        const named = join(dir, 'by-hash', folder, hex);
        assert.ok((await readFile(named)).equals(bytes), `${folder} of round ${round}`);
        assert.equal((await stat(named)).ino, object.ino, `${folder} names the object`);
      }
      assert.deepEqual(await readdir(join(dir, 'by-hash', 'SHA256')), [d.sha256], `round ${round}: temp files gone`);
    }
  });

  it('keeps an object already there and freshens its time, for the sweep of unnamed objects', async () => {
    const dir = join(tmp.dir, 'kept');
    const bytes = Buffer.from('kept\n');
    const d = digests(bytes);
    await mkdir(join(dir, 'by-hash', 'SHA256'), { recursive: true });
    const first = tempPathFor(join(dir, 'by-hash', 'SHA256', 'Packages'));
    await writeFile(first, bytes);
    const object = await placeObject(dir, first, d);
    const old = new Date(Date.now() - 3600_000);
    await utimes(object, old, old);
    const before = await stat(object);
    const second = tempPathFor(join(dir, 'by-hash', 'SHA256', 'Packages'));
    await writeFile(second, bytes);
    await placeObject(dir, second, d);
    const after = await stat(object);
    assert.equal(after.ino, before.ino, 'the object in place is kept');
    assert.ok(after.mtimeMs > before.mtimeMs + 3000_000, 'its time is fresh');
    assert.deepEqual(await readdir(join(dir, 'by-hash', 'SHA256')), [d.sha256]);
  });

  it('prunes the generations past those kept; a torn manifest only keeps more, until the sweep after a full write', async () => {
    const dir = join(tmp.dir, 'prune');
    await mkdir(join(dir, 'by-hash', 'SHA256'), { recursive: true });
    const generation = async (n: number, sweep = false) => {
      const bytes = Buffer.from(`Package: p${n}\n`);
      const d = digests(bytes);
      const temp = tempPathFor(join(dir, 'by-hash', 'SHA256', 'Packages'));
      await writeFile(temp, bytes);
      await placeObject(dir, temp, d);
      await pruneByHash(dir, { variants: [{ digests: d }] }, { keep: 2, minAgeSeconds: 0, maxKept: 2, sweep });
      return d.sha256;
    };
    const manifest = join(dir, 'by-hash', '.generations.json');
    const first = await generation(1);
    const second = await generation(2);
    const third = await generation(3);
    assert.deepEqual((await readdir(join(dir, 'by-hash', 'SHA256'))).sort(), [second, third].sort(), 'the oldest generation pruned');
    assert.ok(!(await readdir(join(dir, 'by-hash', 'SHA256'))).includes(first));

    // Cut short by a crash: nothing it named is known, so nothing is pruned (the sweep after a full write takes the rest).
    await writeFile(manifest, '[{"at":1,"files":["by-hash/SHA256/');
    const fourth = await generation(4);
    assert.deepEqual((await readdir(join(dir, 'by-hash', 'SHA256'))).sort(), [second, third, fourth].sort());
    const fifth = await generation(5);
    const sixth = await generation(6);
    assert.deepEqual((await readdir(join(dir, 'by-hash', 'SHA256'))).sort(), [second, third, fifth, sixth].sort(), 'pruning resumes from the rewritten manifest');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const seventh = await generation(7, true);
    assert.deepEqual((await readdir(join(dir, 'by-hash', 'SHA256'))).sort(), [sixth, seventh].sort(), 'the sweep takes what no generation names');
  });
});
