import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { assembleDocuments, buildRepodata, endsSegment, RepodataBuilder, type PackageChunks } from '../../../../src/domain/repo/rpm/assemble.js';

/** Synthetic chunks: the builder never parses the XML, it orders, joins and compresses it. */
function chunk(i: number): PackageChunks {
  const name = `pkg-${String(i).padStart(5, '0')}`;
  const key = { name, epoch: i % 7 === 0 ? 1 : null, version: `1.${i % 13}`, release: `${i % 3}.el9`, arch: i % 5 ? 'x86_64' : 'noarch', location: `Packages/p/${name}.rpm` };
  return {
    key,
    primary: `<package type="rpm"><name>${name}</name><checksum>${i.toString(16).padStart(64, '0')}</checksum></package>\n`,
    filelists: `<package pkgid="${i}" name="${name}"><file>/usr/share/${name}/file-${i}</file></package>\n`,
    other: `<package pkgid="${i}" name="${name}"><changelog>entry ${i}</changelog></package>\n`,
  };
}

describe('RepodataBuilder: incremental builds equal fresh ones', () => {
  it('after adding, removing and replacing packages, byte for byte', async () => {
    const builder = new RepodataBuilder();
    const options = { timestamp: 1_800_000_000 };
    let set = Array.from({ length: 3000 }, (_, i) => chunk(i));
    const steps: Array<(s: PackageChunks[]) => PackageChunks[]> = [
      (s) => s,
      (s) => [...s, chunk(5000)], // one more, sorted somewhere in the middle
      (s) => s.filter((c) => c.key.name !== 'pkg-01234'), // one removed
      (s) => [...s.slice(0, 10), ...s.slice(10).map((c, i) => (i === 100 ? chunk(7000) : c))], // one replaced
      (s) => [...s].reverse(), // input order must not matter
    ];
    for (const step of steps) {
      set = step(set);
      const incremental = await builder.build(set, options);
      const fresh = await buildRepodata(set, options);
      assert.equal(incremental.repomd, fresh.repomd);
      assert.deepEqual(incremental.files.map((f) => f.path), fresh.files.map((f) => f.path));
      incremental.files.forEach((f, i) => assert.ok(f.data.equals(fresh.files[i]!.data), f.path));
      const docs = assembleDocuments(set);
      const primary = incremental.files.find((f) => f.path.endsWith('primary.xml.gz'))!;
      assert.equal(gunzipSync(primary.data).toString('utf8'), docs.primary);
    }
  });
});

describe('segment boundaries', () => {
  it('fall about once in 64 packages, also where keys differ only near their end', () => {
    // Releases and builds of one package, as a real repository holds them: the keys share all
    // but a few characters. A hash whose low bits ignore those would end (almost) no segment.
    const keys = Array.from({ length: 20_000 }, (_, i) => {
      const name = `lib${['foo', 'bar', 'baz', 'qux'][i % 4]}${Math.floor(i / 400)}`;
      const version = `1.${Math.floor(i / 20) % 20}`;
      const release = `${i % 20}.el9`;
      return { name, epoch: null, version, release, arch: 'x86_64', location: `Packages/${name[0]}/${name}-${version}-${release}.x86_64.rpm` };
    });
    const ends = keys.filter(endsSegment).length;
    assert.ok(ends > 20_000 / 64 / 1.5 && ends < 20_000 / 64 * 1.5, `${ends} boundaries in 20,000 keys, expected about ${Math.round(20_000 / 64)}`);
  });
});
