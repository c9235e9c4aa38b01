import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { DomainError } from '../../../../src/domain/errors.js';
import { formatReleaseDate, releaseDate, releaseFile, type ReleaseFileEntry } from '../../../../src/domain/repo/apt/release.js';
import { makeTempDir } from '../../../helpers/tmp.js';
import { ftparchiveRelease } from './apt-ftparchive.js';

function entry(path: string, data: Buffer): ReleaseFileEntry {
  const hex = (a: string): string => createHash(a).update(data).digest('hex');
  return { path, size: data.length, md5: hex('md5'), sha1: hex('sha1'), sha256: hex('sha256'), sha512: hex('sha512') };
}

/** Date and Valid-Until depend on the clock in apt-ftparchive: compare everything else. */
const withoutDates = (text: string): string => text.replace(/^(Date|Valid-Until): .*\n/gm, '');

describe('releaseFile', () => {
  it('matches apt-ftparchive release on the same index files', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const plain = Buffer.from('Package: a\nVersion: 1\nArchitecture: all\n\n'.repeat(50));
    const files = { 'main/binary-amd64/Packages': plain, 'main/binary-amd64/Packages.gz': gzipSync(plain), 'main/binary-amd64/Packages.xz': Buffer.from('not really xz') };
    await mkdir(join(dir, 'main', 'binary-amd64'), { recursive: true });
    for (const [path, data] of Object.entries(files)) await writeFile(join(dir, path), data);

    const reference = await ftparchiveRelease(dir, {
      Origin: 'Tollgate', Label: 'Tollgate Repo', Suite: 'jammy', Codename: 'jammy', Architectures: 'amd64',
      Components: 'main', Description: 'Private packages', 'Acquire-By-Hash': 'yes', ValidTime: '604800',
    });
    const date = new Date('2024-03-05T07:08:09Z');
    const ours = releaseFile({
      origin: 'Tollgate', label: 'Tollgate Repo', suite: 'jammy', codename: 'jammy', date,
      validUntil: new Date(date.getTime() + 604800_000), architectures: ['amd64'], components: ['main'],
      description: 'Private packages', acquireByHash: true,
      // Given out of order on purpose: Release lists paths sorted.
      files: Object.entries(files).reverse().map(([path, data]) => entry(path, data)),
    });
    assert.equal(withoutDates(ours), withoutDates(reference));
    assert.match(ours, /^Date: Tue, 05 Mar 2024 07:08:09 \+0000$/m);
    assert.match(ours, /^Valid-Until: Tue, 12 Mar 2024 07:08:09 \+0000$/m);
    assert.match(reference, /^Date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/m, 'same date format as the reference');
  });

  it('omits optional fields and refuses line breaks in values', () => {
    const base = { origin: 'O', label: 'L', suite: 's', codename: 'c', date: new Date(0), architectures: ['amd64'], components: ['main'], acquireByHash: false, files: [] };
    const text = releaseFile(base);
    assert.doesNotMatch(text, /Valid-Until|Description|Acquire-By-Hash/);
    assert.equal(text, 'Architectures: amd64\nCodename: c\nComponents: main\nDate: Thu, 01 Jan 1970 00:00:00 +0000\nLabel: L\nOrigin: O\nSuite: s\nMD5Sum:\nSHA1:\nSHA256:\nSHA512:\n');
    assert.throws(() => releaseFile({ ...base, description: 'x\nSHA256:' }), (e: unknown) => e instanceof DomainError && e.code === 'bad_release_field');
  });

  it('honours SOURCE_DATE_EPOCH', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    assert.equal(releaseDate({ SOURCE_DATE_EPOCH: '1700000000' }, now).toISOString(), '2023-11-14T22:13:20.000Z');
    assert.equal(releaseDate({}, now), now);
    assert.equal(releaseDate({ SOURCE_DATE_EPOCH: 'soon' }, now), now);
    assert.equal(formatReleaseDate(new Date('2023-11-14T22:13:20Z')), 'Tue, 14 Nov 2023 22:13:20 +0000');
  });
});
