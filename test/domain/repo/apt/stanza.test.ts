import assert from 'node:assert/strict';
import { mkdir, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PackageFormatError } from '../../../../src/domain/errors.js';
import { debPoolPath } from '../../../../src/domain/repo/apt/pool-path.js';
import { packageStanza, packagesIndex, type PoolFileFacts } from '../../../../src/domain/repo/apt/stanza.js';
import { buildDeb, type DebSpec } from '../../../../harness/debs.js';
import { makeTempDir } from '../../../helpers/tmp.js';
import { controlFieldsOf, fileFacts, ftparchivePackages, splitStanzas } from './apt-ftparchive.js';

const SPECS: DebSpec[] = [
  {
    name: 'hello', version: '1:2.10-1', source: 'hello-src (2.10-1)', depends: 'libc6 (>= 2.34), libfoo1 | libbar1',
    preDepends: 'dpkg (>= 1.15)', recommends: 'hello-doc', provides: 'greeter', conflicts: 'hello-old', breaks: 'hello-old (<< 2)',
    replaces: 'hello-old', multiArch: 'foreign', section: 'utils', priority: 'optional',
    description: 'say hello\nA friendly program.\n\n  verbatim line\nlast line',
    extraControl: { Homepage: 'https://example.com/hello', 'X-Custom-Field': 'kept at the end', 'Built-Using': 'gcc-12 (= 12.2.0-14)', Essential: 'no' },
  },
  { name: 'libfoo1', version: '0.9-2', source: 'libfoo', description: 'foo library' },
  { name: 'data-common', version: '3.0', arch: 'all', description: 'architecture independent data' },
  // A hostile control file trying to set the fields the repository computes.
  {
    name: 'sneaky', version: '1.0', extraControl: { Filename: 'pool/../../etc/passwd', Size: '1', MD5sum: '00', SHA256: 'ff' }, nocheck: true,
  },
];

describe('packageStanza against apt-ftparchive', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  const ours = new Map<string, string>();
  let reference: Map<string, string>;
  let referenceText: string;

  before(async () => {
    ({ dir, cleanup } = await makeTempDir());
    const build = join(dir, 'build');
    await mkdir(build);
    for (const spec of SPECS) {
      const built = await buildDeb(build, spec);
      const fields = await controlFieldsOf(built);
      const get = (n: string): string | undefined => fields.find(([k]) => k === n)?.[1];
      const rel = debPoolPath({ name: spec.name, version: spec.version, architecture: spec.arch ?? 'amd64', source: get('Source') });
      await mkdir(join(dir, dirname(rel)), { recursive: true });
      await rename(built, join(dir, rel));
      ours.set(spec.name, packageStanza(fields, await fileFacts(join(dir, rel), rel)));
    }
    referenceText = await ftparchivePackages(dir);
    reference = new Map(splitStanzas(referenceText).map((s) => [/^Package: (.+)$/m.exec(s)?.[1] ?? '', s]));
  });
  after(() => cleanup());

  for (const spec of SPECS) {
    it(`matches apt-ftparchive byte for byte for ${spec.name}`, () => {
      assert.equal(ours.get(spec.name), reference.get(spec.name));
    });
  }

  it('builds the whole Packages file as apt-ftparchive does', () => {
    const names = [...ours.keys()].sort();
    const referenceSorted = names.map((n) => `${reference.get(n)}\n`).join('');
    assert.equal(packagesIndex(names.map((n) => ours.get(n) as string)), referenceSorted);
    assert.equal(referenceText.length, referenceSorted.length);
  });

  it('places the pool files as the Debian archive does', () => {
    assert.match(ours.get('hello') ?? '', /^Filename: pool\/main\/h\/hello-src\/hello_2\.10-1_amd64\.deb$/m);
    assert.match(ours.get('libfoo1') ?? '', /^Filename: pool\/main\/libf\/libfoo\/libfoo1_0\.9-2_amd64\.deb$/m);
    assert.match(ours.get('data-common') ?? '', /^Filename: pool\/main\/d\/data-common\/data-common_3\.0_all\.deb$/m);
    assert.doesNotMatch(ours.get('sneaky') ?? '', /etc\/passwd|^Size: 1$/m);
  });
});

describe('packageStanza input checks', () => {
  const facts: PoolFileFacts = {
    filename: 'pool/main/h/hello/hello_1.0_amd64.deb', size: 10,
    md5: 'a'.repeat(32), sha1: 'b'.repeat(40), sha256: 'c'.repeat(64), sha512: 'd'.repeat(128),
  };
  const base: Array<[string, string]> = [['Package', 'hello'], ['Version', '1.0'], ['Architecture', 'amd64']];
  const rejects = (fields: Array<[string, string]>, code: string, f: PoolFileFacts = facts): void => {
    assert.throws(() => packageStanza(fields, f), (err: unknown) => err instanceof PackageFormatError && err.code === code);
  };

  it('accepts records, pairs and {name, value} objects alike', () => {
    const pairs: Array<[string, string]> = [...base, ['Description', 'x\n y']];
    const fromPairs = packageStanza(pairs, facts);
    assert.equal(packageStanza({ Package: 'hello', Version: '1.0', Architecture: 'amd64', Description: 'x\n y' }, facts), fromPairs);
    assert.equal(packageStanza(pairs.map(([name, value]) => ({ name, value })), facts), fromPairs);
    assert.ok(fromPairs.endsWith('Description: x\n y\n'));
  });

  it('refuses values that would inject fields or end the stanza', () => {
    rejects([...base, ['Description', 'x\nFilename: evil']], 'bad_control_field');
    rejects([...base, ['Description', 'x\n\nPackage: evil']], 'bad_control_field');
    rejects([...base, ['Description', 'x\n \n y']], 'bad_control_field');
    rejects([...base, ['Bad Name', 'x']], 'bad_control_field');
    rejects([...base, ['-dash', 'x']], 'bad_control_field');
    rejects([...base, ['package', 'twice']], 'bad_control_field');
    rejects(base.slice(1), 'bad_control_field');
  });

  it('refuses bad file facts', () => {
    rejects(base, 'bad_pool_path', { ...facts, filename: '/abs/x.deb' });
    rejects(base, 'bad_pool_path', { ...facts, filename: 'pool/../x.deb' });
    rejects(base, 'bad_pool_path', { ...facts, filename: 'pool/a b.deb' });
    rejects(base, 'bad_checksum', { ...facts, sha256: 'C'.repeat(64) });
    rejects(base, 'bad_file_size', { ...facts, size: -1 });
  });

  it('packagesIndex of nothing is an empty file', () => {
    assert.equal(packagesIndex([]), '');
  });
});
