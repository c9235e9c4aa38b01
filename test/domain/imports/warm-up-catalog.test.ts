/**
 * The made-up catalogs the resolver warm-up walks (CatalogQuery.warmUp): they must take the walk
 * through what real catalogs do (the whole closure, virtual names, alternatives, `:any`, version
 * relations, duplicates sorted by version; RPM file and rich dependencies), or the code V8
 * compiles for them is not the code a real resolution runs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forEachProvidedName, type CatalogEntry, type RpmCatalogRelations } from '../../../src/domain/imports/catalog.js';
import { debFormat, rpmFormat, type NameLookups } from '../../../src/domain/imports/resolve-formats.js';
import { resolveClosure, type CatalogPackage, type Closure } from '../../../src/domain/imports/resolve.js';
import { debWarmUpCatalog, rpmWarmUpCatalog } from '../../../src/domain/imports/warm-up-catalog.js';

type Provider = Awaited<ReturnType<NameLookups['providers']>>[number];

function inMemory(entries: CatalogEntry[]): { root: CatalogPackage; lookups: NameLookups } {
  const byName = new Map<string, CatalogPackage[]>();
  const providers = new Map<string, Provider[]>();
  const add = <T>(map: Map<string, T[]>, key: string, value: T) => map.set(key, [...(map.get(key) ?? []), value]);
  const packages = entries.map((e) => ({ ...e, sourceId: 'warm-up' }));
  for (const pkg of packages) {
    add(byName, pkg.name, pkg);
    forEachProvidedName(pkg, (_kind, name, version, flags) => add(providers, name, { pkg, version, flags }));
  }
  return {
    root: packages[0]!,
    lookups: { byName: async (n) => byName.get(n) ?? [], providers: async (n) => providers.get(n) ?? [], target: async () => [] },
  };
}

const pulledIn = (closure: Closure, test: (relation: string) => boolean) => closure.selected.filter((s) => s.relation !== null && test(s.relation)).length;

describe('resolver warm-up catalogs', () => {
  it('Debian: the closure of warm-0 is every name, through alternatives, virtual names, :any and version relations', async () => {
    const entries = debWarmUpCatalog(600);
    const { root, lookups } = inMemory(entries);
    const closure = await resolveClosure(root, debFormat(lookups, ['amd64', 'all']));
    assert.equal(closure.selected.length, new Set(entries.map((e) => e.name)).size);
    assert.ok(entries.length > 600, 'some names come in two versions');
    assert.deepEqual(closure.unsatisfiable, []);
    assert.ok(pulledIn(closure, (r) => r.includes(' | ')) > 0);
    assert.ok(pulledIn(closure, (r) => r.endsWith('-virtual')) > 0);
    assert.ok(pulledIn(closure, (r) => r.includes(':any')) > 0);
    assert.ok(pulledIn(closure, (r) => /\((<<|=|>=|<=) /.test(r)) > 0);
    assert.ok(entries.some((e) => /^\d+:/.test(e.version)) && entries.some((e) => e.version.includes('~')) && entries.some((e) => e.version.includes('+')));
  });

  it('RPM: the closure of warm-0 is every name, through file, virtual and rich dependencies', async () => {
    const entries = rpmWarmUpCatalog(600);
    const { root, lookups } = inMemory(entries);
    const closure = await resolveClosure(root, rpmFormat(lookups, ['x86_64', 'noarch']));
    assert.equal(closure.selected.length, new Set(entries.map((e) => e.name)).size);
    assert.deepEqual(closure.unsatisfiable, []);
    assert.ok(pulledIn(closure, (r) => r.startsWith('/usr/bin/')) > 0);
    assert.ok(pulledIn(closure, (r) => r.includes('-virtual')) > 0);
    assert.ok(entries.some((e) => (e.relations as RpmCatalogRelations).requires.some((r) => r.name.startsWith('(') && r.name.includes(' or '))));
  });
});
