import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { RpmPackage } from '../../../src/domain/rpm/package.js';
import { readRpmPackage } from '../../../src/domain/rpm/reader.js';
import {
  buildRelationIndex,
  checkRequires,
  formatDependency,
  rangesOverlap,
} from '../../../src/domain/rpm/relations.js';
import { parseRichDependency } from '../../../src/domain/rpm/rich.js';
import { Sense } from '../../../src/domain/rpm/tags.js';
import { buildRpms } from '../../../harness/rpms.js';
import { makeTempDir } from '../../helpers/tmp.js';

const run = promisify(execFile);
const { LESS: LT, GREATER: GT, EQUAL: EQ } = Sense;

// Requirements judged both by our checker and by `rpm -i --test` against a database holding
// the providers below.
const REQUIREMENTS = [
  'prov-a',
  'prov-a >= 2.0',
  'prov-a = 2.0',
  'prov-a = 1:2.0',
  'prov-a = 1:2.0-3',
  'prov-a = 1:2.0-4',
  'prov-a < 1:2.0-4',
  'prov-a > 1:2.0',
  'prov-a >= 1:2.0',
  'prov-a <= 0:9',
  'prov-a > 2:0',
  'cap-x >= 1.5',
  'cap-x = 1.5-1',
  'cap-x = 1.5',
  'cap-x > 1.5-1',
  'cap-y >= 2:5',
  'cap-y < 1',
  'cap-y > 1',
  'cap-z >= 5',
  'cap-r = 2.0-7',
  'cap-r < 2.0-7',
  'cap-t < 1.0',
  'cap-t >= 1.0',
  'cap-t > 1.0~beta',
  '/usr/bin/prov-a-tool',
  '/etc/prov-a.conf',
  '/usr/bin/missing-tool',
  'nothing-provides-this',
  '(prov-a and cap-z)',
  '(nothing-here or cap-z >= 1)',
  '(nothing-here and cap-z)',
  '(cap-x >= 9 or (cap-t and prov-b))',
];

describe('dependency relations', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => undefined;
  let providers: RpmPackage[] = [];
  let requirer: RpmPackage;
  let requirerPath = '';
  let dbPath = '';

  before(async () => {
    ({ dir, cleanup } = await makeTempDir());
    const [a, b, req] = await buildRpms(dir, [
      {
        name: 'prov-a',
        version: '2.0',
        release: '3',
        epoch: 1,
        arch: 'noarch',
        noAutoReqProv: true,
        provides: ['cap-x = 1.5-2', 'cap-y = 3:1.0', 'cap-z', 'cap-r = 2.0'],
        files: { '/usr/bin/prov-a-tool': 'tool', '/etc/prov-a.conf': 'conf' },
      },
      { name: 'prov-b', version: '1.0~rc1', arch: 'noarch', noAutoReqProv: true, provides: ['cap-t = 1.0~rc1'] },
      { name: 'requirer', version: '1', arch: 'noarch', noAutoReqProv: true, requires: REQUIREMENTS },
    ]);
    providers = [await readRpmPackage(a!), await readRpmPackage(b!)];
    requirer = await readRpmPackage(req!);
    requirerPath = req!;
    dbPath = join(dir, 'rpmdb');
    await mkdir(dbPath);
    await run('rpm', ['--dbpath', dbPath, '--initdb']);
    await run('rpm', ['--dbpath', dbPath, '-i', '--justdb', '--nodeps', '--noscripts', a!, b!]);
  });
  after(() => cleanup());

  const index = (): ReturnType<typeof buildRelationIndex> =>
    buildRelationIndex(providers.map((p) => ({ label: `${p.name}-${p.version}-${p.release}.${p.arch}`, provides: p.provides, files: p.files })));

  it('judges every requirement exactly as rpm -i --test does', async () => {
    const result = await run('rpm', ['--dbpath', dbPath, '-i', '--test', requirerPath]).then(
      () => '',
      (e: { stderr: string }) => e.stderr,
    );
    const rpmMissing = result
      .split('\n')
      .map((l) => /^\s+(.*) is needed by /.exec(l)?.[1])
      .filter((m): m is string => m !== undefined)
      .sort();
    const ours = await checkRequires(requirer, index());
    assert.deepEqual(ours.missing.map((m) => m.relation).sort(), rpmMissing);
    // The data set exercises both outcomes.
    assert.ok(rpmMissing.length >= 8 && rpmMissing.length <= REQUIREMENTS.length - 10, rpmMissing.join(', '));
    assert.equal(ours.all_satisfied, false);
    assert.equal(ours.install_blocked, true);
  });

  it('explains what is missing', async () => {
    const ours = await checkRequires(requirer, index());
    const byRelation = new Map(ours.missing.map((m) => [m.relation, m]));
    assert.equal(byRelation.get('nothing-provides-this')?.reason, 'not_provided');
    const wrongVersion = byRelation.get('cap-t >= 1.0');
    assert.equal(wrongVersion?.reason, 'version_not_satisfied');
    assert.deepEqual(wrongVersion?.available, ['prov-b-1.0~rc1-1.noarch (cap-t = 1.0~rc1)']);
  });

  it('satisfies rpmlib(), self-provides and own files without the index', async () => {
    const self = {
      name: 'selfish',
      epoch: null,
      version: '1.0',
      release: '2',
      provides: [{ name: 'selfish-api', flags: EQ, evr: '4', pre: false }],
      files: [{ path: '/usr/bin/selfish' }],
      requires: [
        { name: 'rpmlib(PayloadIsZstd)', flags: Sense.RPMLIB | LT | EQ, evr: '5.4.18-1', pre: false },
        { name: 'selfish', flags: EQ, evr: '1.0-2', pre: false },
        { name: 'selfish-api', flags: GT | EQ, evr: '3', pre: false },
        { name: '/usr/bin/selfish', flags: 0, evr: '', pre: true },
      ],
      recommends: [{ name: 'optional-thing', flags: 0, evr: '', pre: false }],
    };
    const result = await checkRequires(self, buildRelationIndex([]));
    assert.deepEqual(result.missing.map((m) => [m.relation, m.kind]), [['optional-thing', 'recommends']]);
    assert.equal(result.all_satisfied, false);
    assert.equal(result.install_blocked, false);
  });

  it('compares ranges like rpmdsCompare', () => {
    const r = (flags: number, evr: string): { flags: number; evr: string } => ({ flags, evr });
    assert.equal(rangesOverlap(r(EQ, '1.0-1'), r(GT | EQ, '1.0')), true);
    assert.equal(rangesOverlap(r(EQ, '1.0'), r(EQ, '1.0-5')), true, 'no release on one side');
    assert.equal(rangesOverlap(r(EQ, '1.0-1'), r(GT, '1.0')), false);
    assert.equal(rangesOverlap(r(EQ, '1:1.0'), r(LT, '2.0')), false, 'an explicit epoch wins over none');
    assert.equal(rangesOverlap(r(EQ, '0:1.0'), r(LT, '2.0')), true);
    assert.equal(rangesOverlap(r(LT, '1.0'), r(GT, '2.0')), false);
    assert.equal(rangesOverlap(r(GT, '1.0'), r(LT, '2.0')), true);
    assert.equal(rangesOverlap(r(0, ''), r(GT, '2.0')), true);
    assert.equal(formatDependency({ name: 'a', flags: GT | EQ, evr: '1' }), 'a >= 1');
  });

  it('parses rich dependencies, and refuses nonsense', () => {
    assert.deepEqual(parseRichDependency('(a >= 1.0 or (b if c else d))'), {
      op: 'or',
      args: [
        { op: 'simple', name: 'a', flags: GT | EQ, evr: '1.0' },
        {
          op: 'if',
          args: [
            { op: 'simple', name: 'b', flags: 0, evr: '' },
            { op: 'simple', name: 'c', flags: 0, evr: '' },
            { op: 'simple', name: 'd', flags: 0, evr: '' },
          ],
        },
      ],
    });
    assert.deepEqual(parseRichDependency('(foo(x86-64) with bar)'), {
      op: 'with',
      args: [
        { op: 'simple', name: 'foo(x86-64)', flags: 0, evr: '' },
        { op: 'simple', name: 'bar', flags: 0, evr: '' },
      ],
    });
    for (const bad of ['(a or)', '(a and b or c)', '(a', 'a and b', '(a xor b)', `${'('.repeat(100)}a${')'.repeat(100)}`]) {
      assert.equal(parseRichDependency(bad), null, bad);
    }
  });
});
