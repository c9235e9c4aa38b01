import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { assembleDocuments, buildRepodata, RepodataBuilder, type PackageChunks } from '../../../../src/domain/repo/rpm/assemble.js';

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
