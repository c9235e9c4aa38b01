/** Embedded components against OSV advisories of their own ecosystems (issue 10), and the version orders used. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { componentLookup, matchComponents, MAVEN_SCHEME, PEP440_SCHEME, SEMVER_SCHEME, type ComponentRef } from '../../../src/domain/security/components.js';
import type { AdvisoryRow } from '../../../src/domain/security/types.js';
import type { VersionScheme } from '../../../src/domain/security/version-scheme.js';

/** Asserts `versions` is strictly ascending under `scheme` (and each equals itself). */
function ascending(scheme: VersionScheme, versions: string[]): void {
  for (let i = 0; i < versions.length; i++) {
    assert.equal(scheme.compare(versions[i]!, versions[i]!), 0, versions[i]);
    for (let j = i + 1; j < versions.length; j++) {
      assert.ok(scheme.compare(versions[i]!, versions[j]!) < 0, `${scheme.name}: ${versions[i]} < ${versions[j]}`);
      assert.ok(scheme.compare(versions[j]!, versions[i]!) > 0, `${scheme.name}: ${versions[j]} > ${versions[i]}`);
    }
  }
}

describe('component version orders', () => {
  it('SemVer 2.0 precedence, with Go\'s v prefix and pseudo-versions', () => {
    ascending(SEMVER_SCHEME, ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.2.0', '1.10.0', '2.0.0']);
    assert.equal(SEMVER_SCHEME.compare('v1.8.0', '1.8.0'), 0);
    assert.equal(SEMVER_SCHEME.compare('1.0.0+build.1', '1.0.0'), 0);
    assert.ok(SEMVER_SCHEME.compare('v0.0.0-20210101000000-abcdef123456', '0.0.1') < 0);
    assert.throws(() => SEMVER_SCHEME.compare('1.0', '1.0.0'));
  });

  it('PEP 440 for the common forms', () => {
    ascending(PEP440_SCHEME, ['1.0.dev0', '1.0a1', '1.0a2.dev1', '1.0a2', '1.0b1', '1.0rc1', '1.0', '1.0.post1', '1.0.1', '1.1', '2.31.0', '1!0.5']);
    assert.equal(PEP440_SCHEME.compare('1.0', '1.0.0'), 0);
    assert.equal(PEP440_SCHEME.compare('1.0RC1', '1.0c1'), 0);
    assert.equal(PEP440_SCHEME.compare('1.0-1', '1.0.post1'), 0);
  });

  it('Maven ComparableVersion for numbers and the known qualifiers', () => {
    ascending(MAVEN_SCHEME, ['1.0-alpha-1', '1.0-alpha2', '1.0-beta', '1.0-M1', '1.0-rc1', '1.0-SNAPSHOT', '1.0', '1.0-sp1', '1.0.1', '1.2', '1.10']);
    assert.equal(MAVEN_SCHEME.compare('1.0', '1'), 0);
    assert.equal(MAVEN_SCHEME.compare('1.0.0', '1-ga'), 0);
    assert.equal(MAVEN_SCHEME.compare('1.0-CR1', '1.0-rc1'), 0);
  });
});

const row = (ecosystem: string, name: string, ranges: AdvisoryRow['ranges'], cve: string, severity: AdvisoryRow['severity'] = 'high'): AdvisoryRow => ({
  id: `GHSA-${cve}`, cve_ids: [cve], ecosystem, package_name: name, purl: null, ranges, versions: [], severity, severity_source: 'cvss_v3',
  cvss_vector: null, cvss_score: null, urgency: null, wont_fix: false, summary: `${name} advisory`, modified: null, published: null,
});
const comp = (ecosystem: string, namespace: string | null, name: string, version: string | null, purl: string): ComponentRef => ({ ecosystem, namespace, name, version, purl });

describe('matching embedded components', () => {
  const components = [
    comp('npm', null, 'left-pad', '1.3.0', 'pkg:npm/left-pad@1.3.0'),
    comp('npm', '@scope', 'util', '0.2.0', 'pkg:npm/%40scope/util@0.2.0'),
    comp('pypi', null, 'requests', '2.31.0', 'pkg:pypi/requests@2.31.0'),
    comp('maven', 'org.example', 'widget', '3.1.4', 'pkg:maven/org.example/widget@3.1.4'),
    comp('golang', null, 'github.com/spf13/cobra', 'v1.8.0', 'pkg:golang/github.com/spf13/cobra@v1.8.0'),
    comp('cargo', null, 'serde', '1.0.190', 'pkg:cargo/serde@1.0.190'),
    comp('golang', null, 'example.com/tool', null, 'pkg:golang/example.com/tool'),
  ];
  const advisories = [
    row('npm', 'left-pad', [{ introduced: '0', fixed: '1.3.1' }], 'CVE-2026-0001', 'critical'),
    row('npm', '@scope/util', [{ introduced: '0.3.0' }], 'CVE-2026-0002'),
    row('PyPI', 'Requests', [{ introduced: '2.0.0', fixed: '2.32.0' }], 'CVE-2026-0003'),
    row('Maven', 'org.example:widget', [{ introduced: '3.0', fixed: '3.1.5' }], 'CVE-2026-0004'),
    row('Go', 'github.com/spf13/cobra', [{ introduced: '0', fixed: '1.8.1' }], 'CVE-2026-0005'),
    row('crates.io', 'serde', [{ introduced: '1.0.0', last_affected: '1.0.189' }], 'CVE-2026-0006'),
    row('npm', 'chalk', [{ introduced: '0' }], 'CVE-2026-0007'),
    row('npm', 'left-pad', [{ introduced: '0', fixed: '1.3.1' }], 'CVE-2026-0008'),
  ];

  it('looks each component up in its OSV ecosystem and compares with that ecosystem\'s order', () => {
    const found = matchComponents(components, advisories);
    assert.deepEqual(found.map((f) => [f.cve_id, f.affected_component, f.installed_version, f.fix_state, f.fixed_version]).sort(), [
      ['CVE-2026-0001', 'pkg:npm/left-pad@1.3.0', '1.3.0', 'fixed', '1.3.1'],
      ['CVE-2026-0003', 'pkg:pypi/requests@2.31.0', '2.31.0', 'fixed', '2.32.0'],
      ['CVE-2026-0004', 'pkg:maven/org.example/widget@3.1.4', '3.1.4', 'fixed', '3.1.5'],
      ['CVE-2026-0005', 'pkg:golang/github.com/spf13/cobra@v1.8.0', 'v1.8.0', 'fixed', '1.8.1'],
      ['CVE-2026-0008', 'pkg:npm/left-pad@1.3.0', '1.3.0', 'fixed', '1.3.1'],
    ]);
    assert.equal(found.find((f) => f.cve_id === 'CVE-2026-0001')!.severity, 'critical');
  });

  it('leaves out CVEs already found in the package itself, and components without a version', () => {
    assert.deepEqual(matchComponents(components, advisories, new Set(['CVE-2026-0001', 'CVE-2026-0003', 'CVE-2026-0004', 'CVE-2026-0005'])).map((f) => f.cve_id), ['CVE-2026-0008']);
    assert.equal(componentLookup(components[6]!), null);
    assert.deepEqual(componentLookup(components[2]!), { ecosystem: 'PyPI', names: ['requests'], normalised: true });
    assert.deepEqual(componentLookup(components[1]!), { ecosystem: 'npm', names: ['@scope/util'], normalised: false });
  });
});
