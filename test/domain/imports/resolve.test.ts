/**
 * The closure walk over in-memory catalogs: Debian architecture qualifiers and Multi-Arch, RPM
 * conditional (`if`/`unless`/`else`) rich dependencies.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DebCatalogRelations, RpmCatalogRelations } from '../../../src/domain/imports/catalog.js';
import { debFormat, rpmFormat, type NameLookups } from '../../../src/domain/imports/resolve-formats.js';
import { resolveClosure, type CatalogPackage } from '../../../src/domain/imports/resolve.js';

function lookups(packages: CatalogPackage[], namesOf: (p: CatalogPackage) => Array<{ name: string; version: string | null; flags: number | null }>, target: string[] = []): NameLookups {
  return {
    byName: async (name) => packages.filter((p) => p.name === name),
    providers: async (name) => packages.flatMap((pkg) => namesOf(pkg).filter((n) => n.name === name).map((n) => ({ pkg, version: n.version, flags: n.flags }))),
    target: async (name) => (target.includes(name) ? [{ kind: 'package', version: null, flags: null }] : []),
  };
}

const deb = (name: string, fields: Partial<DebCatalogRelations> & { arch?: string; version?: string } = {}): CatalogPackage => ({
  format: 'deb', name, version: fields.version ?? '1.0-1', arch: fields.arch ?? 'amd64', location: `pool/${name}.deb`, size: 1, sha256: '0'.repeat(64), summary: '', sourceId: 's',
  relations: { depends: fields.depends ?? null, preDepends: fields.preDepends ?? null, provides: fields.provides ?? null, multiArch: fields.multiArch ?? null },
});

const rpm = (name: string, requires: string[] = [], provides: string[] = []): CatalogPackage => ({
  format: 'rpm', name, version: '1.0-1', arch: 'x86_64', location: `Packages/${name}.rpm`, size: 1, sha256: '0'.repeat(64), summary: '', sourceId: 's',
  relations: { requires: requires.map((r) => ({ name: r, flags: 0, evr: '' })), provides: provides.map((p) => ({ name: p, flags: 0, evr: '' })), files: [] } as RpmCatalogRelations,
});

const names = (closure: { selected: Array<{ pkg: CatalogPackage }> }) => closure.selected.map((s) => s.pkg.name).sort();

describe('closure walk: Debian architecture qualifiers and Multi-Arch', () => {
  const debLookups = (packages: CatalogPackage[]) => debFormat(lookups(packages, () => []), ['amd64', 'all']);

  it('`:any` is met by a Multi-Arch: allowed package, and by nothing else', async () => {
    const catalog = [
      deb('tool', { depends: 'python3:any (>= 3.11), perl:any' }),
      deb('python3', { version: '3.11.2-1+b1', multiArch: 'allowed' }),
      deb('perl', { version: '5.36.0-7+deb12u1' }),
    ];
    const closure = await resolveClosure(catalog[0]!, debLookups(catalog));
    assert.deepEqual(names(closure), ['python3', 'tool']);
    assert.deepEqual(closure.unsatisfiable.map((u) => u.relation), ['perl:any']);
  });

  it('`:native` and no qualifier take any accepted architecture; `:i386` only an i386 package', async () => {
    const catalog = [
      deb('app', { depends: 'libdata:native, docs, libfoo:i386 | libfoo' }),
      deb('libdata', { arch: 'all' }),
      deb('docs', { arch: 'all', multiArch: 'foreign' }),
      deb('libfoo', { multiArch: 'same' }),
    ];
    const closure = await resolveClosure(catalog[0]!, debLookups(catalog));
    assert.deepEqual(names(closure), ['app', 'docs', 'libdata', 'libfoo']);
    assert.deepEqual(closure.unsatisfiable, []);
  });
});

describe('closure walk: a name asked for twice', () => {
  const debLookups = (packages: CatalogPackage[]) => debFormat(lookups(packages, () => []), ['amd64', 'all']);
  const foos = ['1.0-1', '2.5-1', '3.0-1', '2.9~rc1-1'].map((version) => deb('foo', { version }));

  it('picks the highest version that also meets the other one-alternative relations on that name', async () => {
    for (const depends of ['foo (>= 2), foo (<< 3)', 'foo (<< 3), foo (>= 2)', 'foo (>= 2) | bar, foo (<< 3)', 'bar2 | foo (>= 2), foo (<< 2.9~)']) {
      const closure = await resolveClosure(deb('app', { depends }), debLookups(foos));
      const picked = closure.selected.find((s) => s.pkg.name === 'foo');
      assert.equal(picked?.pkg.version, depends.endsWith('(<< 2.9~)') ? '2.5-1' : '2.9~rc1-1', depends);
      assert.deepEqual(closure.unsatisfiable, [], depends);
    }
  });

  it('a relation on an alternative with others does not narrow the choice', async () => {
    const closure = await resolveClosure(deb('app', { depends: 'foo (>= 2), foo (<< 3) | bar' }), debLookups(foos));
    assert.equal(closure.selected.find((s) => s.pkg.name === 'foo')?.pkg.version, '3.0-1');
  });
});

describe('closure walk: RPM conditional rich dependencies', () => {
  const rpmLookups = (packages: CatalogPackage[], target: string[] = []) =>
    rpmFormat(lookups(packages, (p) => (p.relations as RpmCatalogRelations).provides.map((x) => ({ name: x.name, version: null, flags: null })), target), ['x86_64', 'noarch']);

  it('`(A if B)` pulls A in only when B is selected, whenever B comes in', async () => {
    const catalog = [
      rpm('app', ['(app-selinux if selinux-policy)', '(app-bash-completion if bash)', 'base']),
      rpm('base', ['selinux-policy']),
      rpm('selinux-policy'),
      rpm('app-selinux'),
      rpm('app-bash-completion'),
      rpm('bash'),
    ];
    const closure = await resolveClosure(catalog[0]!, rpmLookups(catalog));
    // selinux-policy arrives two levels down, after app's conditional was read: still decided with it.
    assert.deepEqual(names(closure), ['app', 'app-selinux', 'base', 'selinux-policy']);
  });

  it('`(A unless B)` pulls A in when B is neither selected nor in the target; `else` takes the other branch', async () => {
    const catalog = [
      rpm('app', ['(fallback-crypto unless openssl-libs)', '(pulse-plugin if pulseaudio else pipewire-plugin)']),
      rpm('fallback-crypto'),
      rpm('openssl-libs'),
      rpm('pulse-plugin'),
      rpm('pipewire-plugin'),
    ];
    assert.deepEqual(names(await resolveClosure(catalog[0]!, rpmLookups(catalog))), ['app', 'fallback-crypto', 'pipewire-plugin']);
    // The target distribution already holds openssl-libs and pulseaudio.
    const withTarget = await resolveClosure(catalog[0]!, rpmLookups(catalog, ['openssl-libs', 'pulseaudio']));
    assert.deepEqual(names(withTarget), ['app', 'pulse-plugin']);
  });

  it('a conditional whose required part is missing is reported as unsatisfiable', async () => {
    const catalog = [rpm('app', ['(app-gnome if gnome-shell)', 'gnome-shell']), rpm('gnome-shell')];
    const closure = await resolveClosure(catalog[0]!, rpmLookups(catalog));
    assert.deepEqual(names(closure), ['app', 'gnome-shell']);
    assert.deepEqual(closure.unsatisfiable.map((u) => u.relation), ['(app-gnome if gnome-shell)']);
  });
});
