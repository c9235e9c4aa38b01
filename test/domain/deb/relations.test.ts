import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildPackageIndex, checkDependencies, type PublishedPackage } from '../../../src/domain/deb/dependencies.js';
import { formatRelation, parseProvides, parseRelation, parseRelations } from '../../../src/domain/deb/relations.js';
import { PackageFormatError } from '../../../src/domain/errors.js';
import { makeTempDir } from '../../helpers/tmp.js';

const exec = promisify(execFile);

function code(expected: string): (error: unknown) => boolean {
  return (error: unknown) => error instanceof PackageFormatError && error.code === expected;
}

describe('parseRelations', () => {
  it('parses groups, alternatives, versions and architecture qualifiers', () => {
    const groups = parseRelations('libc6 (>= 2.34), python3:any | python3-minimal (<< 3.13~),\n  default-mta | mail-transport-agent, libx:amd64 (=1.0-1)');
    assert.equal(groups.length, 4);
    assert.deepEqual(groups[0]?.alternatives[0], {
      name: 'libc6',
      archQualifier: null,
      constraint: { op: '>=', version: '2.34' },
      archRestriction: null,
      profiles: null,
    });
    assert.equal(groups[1]?.alternatives[0]?.archQualifier, 'any');
    assert.deepEqual(groups[1]?.alternatives[1]?.constraint, { op: '<<', version: '3.13~' });
    assert.equal(groups[1]?.text, 'python3:any | python3-minimal (<< 3.13~)');
    assert.deepEqual(groups[3]?.alternatives[0]?.constraint, { op: '=', version: '1.0-1' });
    assert.equal(formatRelation(groups[3]!.alternatives[0]!), 'libx:amd64 (= 1.0-1)');
  });

  it('keeps (and ignores) architecture restrictions and build profiles', () => {
    const relation = parseRelation('libfoo-dev (>= 1.2) [amd64 !i386] <!nocheck> <stage1 cross>');
    assert.equal(relation.archRestriction, 'amd64 !i386');
    assert.equal(relation.profiles, '<!nocheck> <stage1 cross>');
    assert.equal(formatRelation(relation), 'libfoo-dev (>= 1.2)');
  });

  it('accepts the obsolete < and > operators and empty fields', () => {
    assert.equal(parseRelation('foo (< 1.0)').constraint?.op, '<');
    assert.equal(parseRelation('foo (> 1.0)').constraint?.op, '>');
    assert.deepEqual(parseRelations(''), []);
    assert.deepEqual(parseRelations(null), []);
    assert.deepEqual(parseRelations('  \n '), []);
  });

  it('rejects malformed relations with bad_control_field', () => {
    for (const bad of ['foo,,bar', 'Foo', 'foo (>> )', 'foo (~= 1)', 'foo (>= 1.0', 'foo bar', 'foo (>= a b)', 'foo | ', 'foo:', 'foo (>= -1)', '../x']) {
      assert.throws(() => parseRelations(bad), code('bad_control_field'), bad);
    }
  });

  it('parses Provides, refusing alternatives and non-= versions', () => {
    assert.deepEqual(parseProvides('mail-transport-agent, libfoo-abi (= 2.1)'), [
      { name: 'mail-transport-agent', version: null },
      { name: 'libfoo-abi', version: '2.1' },
    ]);
    assert.throws(() => parseProvides('a | b'), code('bad_control_field'));
    assert.throws(() => parseProvides('a (>= 1)'), code('bad_control_field'));
  });
});

/** The "distribution" used by the checker tests and the dpkg oracle. */
const PUBLISHED: PublishedPackage[] = [
  { name: 'libc6', version: '2.39-0ubuntu8', arch: 'amd64', multiArch: 'same' },
  { name: 'libfoo1', version: '1.2-1', arch: 'amd64', multiArch: 'same' },
  { name: 'libfoo1', version: '1.4-1', arch: 'amd64', multiArch: 'same' },
  { name: 'python3', version: '3.12.3-0ubuntu1', arch: 'amd64', multiArch: 'allowed' },
  { name: 'perl', version: '5.38.2-3', arch: 'amd64' },
  { name: 'postfix', version: '3.8.6-1', arch: 'amd64', provides: 'mail-transport-agent, default-mta (= 3.8)' },
  { name: 'data-files', version: '7', arch: 'all', multiArch: 'foreign' },
  { name: 'docs', version: '1.0', arch: 'all' },
  { name: 'i386-only', version: '1.0', arch: 'i386' },
  { name: 'tool-foreign', version: '2.0', arch: 'i386', multiArch: 'foreign' },
  { name: 'virtual-versioned-provider', version: '9', arch: 'amd64', provides: 'vv (= 1.5)' },
  { name: 'virtual-plain-provider', version: '9', arch: 'amd64', provides: 'vp' },
];

describe('checkDependencies', () => {
  const index = buildPackageIndex(PUBLISHED);

  it('reports satisfied dependencies', () => {
    const result = checkDependencies(
      { preDepends: 'libc6 (>= 2.34)', depends: 'libfoo1 (>= 1.3), python3:any, perl:native, data-files, docs, tool-foreign' },
      index,
    );
    assert.deepEqual(result, { all_satisfied: true, missing: [], install_blocked: false });
  });

  it('lists each unsatisfied group with a reason, and blocks installation', () => {
    const result = checkDependencies({ depends: 'libfoo1 (>= 2.0), nosuch | nosuch2, libc6' }, index);
    assert.equal(result.all_satisfied, false);
    assert.equal(result.install_blocked, true);
    assert.deepEqual(result.missing.map((m) => m.relation), ['libfoo1 (>= 2.0)', 'nosuch | nosuch2']);
    assert.match(result.missing[0]!.reason, /1\.2-1, 1\.4-1/);
    assert.match(result.missing[1]!.reason, /nosuch: not published.*nosuch2: not published/);
  });

  it('accepts an alternative when the first one is missing', () => {
    assert.equal(checkDependencies({ depends: 'nosuch (>= 1) | libfoo1' }, index).all_satisfied, true);
  });

  it('resolves virtual packages through Provides, versioned ones only by versioned Provides', () => {
    assert.equal(checkDependencies({ depends: 'mail-transport-agent' }, index).all_satisfied, true);
    assert.equal(checkDependencies({ depends: 'mail-transport-agent (>= 1)' }, index).all_satisfied, false);
    assert.equal(checkDependencies({ depends: 'default-mta (>= 3.0)' }, index).all_satisfied, true);
    assert.equal(checkDependencies({ depends: 'default-mta (>> 3.8)' }, index).all_satisfied, false);
    assert.equal(checkDependencies({ depends: 'vv (>= 1.0), vv (<< 2), vp' }, index).all_satisfied, true);
    assert.equal(checkDependencies({ depends: 'vp (>= 1)' }, index).all_satisfied, false);
  });

  it('applies Multi-Arch and architecture qualifiers as dpkg does', () => {
    const satisfied = (depends: string): boolean => checkDependencies({ depends }, index).all_satisfied;
    assert.equal(satisfied('perl:any'), false); // :any needs Multi-Arch: allowed
    assert.equal(satisfied('libfoo1:any'), false);
    assert.equal(satisfied('libfoo1:amd64'), true);
    assert.equal(satisfied('libfoo1:i386'), false);
    assert.equal(satisfied('i386-only'), false); // another architecture without Multi-Arch: foreign
    assert.equal(satisfied('i386-only:i386'), true);
    assert.equal(satisfied('tool-foreign'), true);
  });

  it('does not block installation for unsatisfied Recommends', () => {
    const result = checkDependencies({ depends: 'libc6', recommends: 'nosuch' }, index);
    assert.deepEqual(result.install_blocked, false);
    assert.equal(result.all_satisfied, false);
    assert.equal(result.missing[0]?.field, 'Recommends');
  });

  it('throws bad_control_field for an unparsable field', () => {
    assert.throws(() => checkDependencies({ depends: 'libc6 (>= ' }, index), code('bad_control_field'));
  });

  it('works on a custom index backed by lookups (as built from DB rows)', () => {
    let lookups = 0;
    const lazy = {
      byName: (name: string) => {
        lookups += 1;
        return name === 'x' ? [{ name: 'x', version: '1', arch: 'amd64', multiArch: 'no' as const }] : [];
      },
      providers: () => [],
    };
    assert.equal(checkDependencies({ depends: 'x (= 1)' }, lazy).all_satisfied, true);
    assert.ok(lookups > 0);
  });
});

describe('agreement with dpkg-checkbuilddeps (Dpkg::Deps) on the same package set', () => {
  let admindir: string;
  let srcdir: string;
  let cleanup: () => Promise<void>;

  before(async () => {
    const temp = await makeTempDir();
    cleanup = temp.cleanup;
    admindir = join(temp.dir, 'admin');
    srcdir = join(temp.dir, 'src');
    await mkdir(join(admindir, 'updates'), { recursive: true });
    await mkdir(join(srcdir, 'debian'), { recursive: true });
    await writeFile(join(admindir, 'available'), '');
    // The oracle sees one installed version per package: use the newest of each name.
    const newest = new Map<string, PublishedPackage>();
    for (const pkg of PUBLISHED) newest.set(pkg.name, pkg);
    const status = [...newest.values()]
      .map((pkg) =>
        [
          `Package: ${pkg.name}`,
          'Status: install ok installed',
          `Version: ${pkg.version}`,
          `Architecture: ${pkg.arch}`,
          ...(pkg.multiArch ? [`Multi-Arch: ${pkg.multiArch}`] : []),
          ...(pkg.provides ? [`Provides: ${pkg.provides}`] : []),
          'Maintainer: T <t@example.invalid>',
          'Description: t',
          '',
        ].join('\n'),
      )
      .join('\n');
    await writeFile(join(admindir, 'status'), status);
    await writeFile(join(srcdir, 'debian', 'control'), 'Source: s\nMaintainer: T <t@example.invalid>\n\nPackage: s\nArchitecture: any\nDescription: d\n');
  });
  after(() => cleanup());

  const CASES = [
    'libc6 (>= 2.34)',
    'libc6 (>= 2.40)',
    'libfoo1 (>= 1.3)',
    'libfoo1 (<< 1.3)',
    'libfoo1 (= 1.4-1)',
    'python3:any',
    'python3:any (>= 3.12)',
    'perl:any',
    'perl:native',
    'perl:amd64 (>= 5)',
    'libfoo1:any',
    'data-files',
    'docs',
    'docs:any',
    'i386-only',
    'i386-only:i386',
    'tool-foreign',
    'tool-foreign (>= 3)',
    'mail-transport-agent',
    'mail-transport-agent (>= 1)',
    'default-mta (>= 3.8)',
    'default-mta (<< 3.8)',
    'vv (>= 1.5)',
    'vv (>> 1.5)',
    'vp',
    'vp (= 9)',
    'nosuch | perl',
    'nosuch | nosuch2',
    'postfix (< 3.8.6-1)',
    'postfix (> 3.8.6-1)',
  ];

  for (const depends of CASES) {
    it(depends, async () => {
      const oracle = await exec('dpkg-checkbuilddeps', [`--admindir=${admindir}`, '-d', depends], { cwd: srcdir }).then(
        () => true,
        (error: { stderr?: string }) => {
          assert.match(error.stderr ?? '', /Unmet build dependencies/);
          return false;
        },
      );
      const index = buildPackageIndex(PUBLISHED.filter((pkg) => !(pkg.name === 'libfoo1' && pkg.version === '1.2-1')));
      assert.equal(checkDependencies({ depends }, index).all_satisfied, oracle);
    });
  }
});
