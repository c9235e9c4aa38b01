import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { advisoryLookupFromRows, matchIdentities, matchPackage, parseSourceRpm, stripBinNmu } from '../../../src/domain/security/matcher.js';
import { normalizeOsvRecord } from '../../../src/domain/security/osv.js';
import type { AdvisoryRow, Finding, PackageRef } from '../../../src/domain/security/types.js';
import { DPKG_SCHEME, RPM_SCHEME, type VersionScheme } from '../../../src/domain/security/version-scheme.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/security/osv');
const rows: AdvisoryRow[] = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .flatMap((f) => normalizeOsvRecord(JSON.parse(readFileSync(join(FIXTURES, f), 'utf8'))).rows);
const lookup = advisoryLookupFromRows(rows);

const deb = (name: string, version: string, extra: Partial<PackageRef> = {}): PackageRef => ({ format: 'deb', name, version, arch: 'amd64', ...extra });
const rpm = (name: string, version: string, sourcerpm: string | null, extra: Partial<PackageRef> = {}): PackageRef => ({
  format: 'rpm',
  name,
  version,
  arch: 'x86_64',
  sourcerpm,
  ...extra,
});
const brief = (fs: Finding[]): string[] => fs.map((f) => `${f.cve_id} ${f.severity} ${f.fix_state} ${f.fixed_version ?? '-'} ${f.affected_component}`);

describe('deb matching (Debian / Ubuntu name source packages)', () => {
  it('matches a binary (libssl3) through its source package (openssl)', () => {
    const findings = matchPackage(deb('libssl3', '3.0.11-1~deb12u1', { source_name: 'openssl' }), 'Debian:12', lookup);
    assert.deepEqual(brief(findings), [
      'CVE-2023-5363 medium fixed 3.0.11-1~deb12u2 openssl',
      'CVE-2023-5678 low fixed 3.0.13-1~deb12u1 openssl',
    ]);
    const dsa = findings[0]!;
    assert.equal(dsa.advisory_id, 'DSA-5532-1');
    assert.equal(dsa.severity_source, 'default', 'a DSA without vector or urgency gets the documented default');
    assert.equal(dsa.installed_version, '3.0.11-1~deb12u1');
    assert.equal(dsa.in_kev, null);
    assert.equal(findings[1]!.severity_source, 'distro');
  });

  it('a fixed version is not affected; the source name defaults to the package name', () => {
    assert.deepEqual(matchPackage(deb('libssl3', '3.0.13-1~deb12u1', { source_name: 'openssl' }), 'Debian:12', lookup), []);
    assert.equal(matchPackage(deb('openssl', '3.0.9-1'), 'Debian:12', lookup).length, 2);
    assert.deepEqual(matchPackage(deb('libssl3', '3.0.9-1'), 'Debian:12', lookup), [], 'binary name alone is not an advisory name');
  });

  it('only uses advisories of the asked ecosystem', () => {
    // 1.1.1w-0+deb11u1 is below the Debian:11 fix but the package is in bookworm: only Debian:12 rows apply
    const findings = matchPackage(deb('openssl', '1.1.1w-0+deb11u1'), 'Debian:12', lookup);
    assert.ok(findings.every((f) => f.advisory_id !== 'DEBIAN-CVE-2023-5678' || f.fixed_version === '3.0.13-1~deb12u1'));
    assert.deepEqual(matchPackage(deb('openssl', '1.1.1w-0+deb11u2'), 'Debian:11', lookup), []);
  });

  it('strips a binNMU suffix to get the source version', () => {
    assert.equal(stripBinNmu('2.9.14+dfsg-1.3+b1'), '2.9.14+dfsg-1.3');
    assert.equal(stripBinNmu('1.2-3+b12'), '1.2-3');
    assert.equal(stripBinNmu('1.2-3+deb12u1'), '1.2-3+deb12u1');
    // DLA-3700-1: last_affected 2.9.14+dfsg-1.3 and versions[] — the binNMU binary is that source version
    const findings = matchPackage(deb('libxml2', '2.9.14+dfsg-1.3+b1'), 'Debian:12', lookup);
    assert.deepEqual(brief(findings), ['CVE-2023-39615 medium not-fixed - libxml2', 'CVE-2023-45322 medium not-fixed - libxml2']);
    assert.equal(findings[0]!.installed_version, '2.9.14+dfsg-1.3+b1');
    // Compared as a binary version it would look newer than last_affected and be missed.
    assert.deepEqual(matchPackage(deb('libxml2', '2.9.14+dfsg-1.3+b1', { source_version: '2.9.14+dfsg-1.3+b1' }), 'Debian:12', lookup), []);
  });

  it('uses the Source: version when the binary version differs', () => {
    const pkg = deb('libxml2-utils', '1:5.0', { source_name: 'libxml2', source_version: '2.9.14+dfsg-1.2' });
    assert.deepEqual(matchIdentities(pkg), [{ name: 'libxml2', version: '2.9.14+dfsg-1.2' }]);
    assert.equal(matchPackage(pkg, 'Debian:12', lookup).length, 2);
  });

  it('reports wont-fix for "ignored" advisories', () => {
    assert.deepEqual(brief(matchPackage(deb('tar', '1.34+dfsg-1.2+deb12u1'), 'Debian:12', lookup)), ['CVE-2005-2541 negligible wont-fix - tar']);
    assert.deepEqual(brief(matchPackage(deb('gpg', '2.2.27-3ubuntu2.1', { source_name: 'gnupg2' }), 'Ubuntu:22.04:LTS', lookup)), [
      'CVE-2022-3219 low wont-fix - gnupg2',
    ]);
  });

  it('compares Ubuntu versions with epochs and merges a CVE reported by USN and UBUNTU-CVE', () => {
    const findings = matchPackage(deb('openssh-client', '1:8.9p1-3ubuntu0.4', { source_name: 'openssh' }), 'Ubuntu:22.04:LTS', lookup);
    assert.deepEqual(brief(findings), [
      'CVE-2023-48795 medium fixed 1:8.9p1-3ubuntu0.6 openssh',
      'CVE-2023-51384 medium fixed 1:8.9p1-3ubuntu0.5 openssh',
      'CVE-2023-51385 medium fixed 1:8.9p1-3ubuntu0.5 openssh',
    ]);
    const terrapin = findings[0]!;
    assert.equal(terrapin.advisory_id, 'UBUNTU-CVE-2023-48795', 'the highest fixed version wins');
    assert.equal(terrapin.cvss_score, 5.9);
    assert.equal(terrapin.severity_source, 'cvss_v3');
    // Between the USN fix and the UBUNTU-CVE fix: only the later one still applies.
    assert.deepEqual(brief(matchPackage(deb('openssh-client', '1:8.9p1-3ubuntu0.5', { source_name: 'openssh' }), 'Ubuntu:22.04:LTS', lookup)), [
      'CVE-2023-48795 medium fixed 1:8.9p1-3ubuntu0.6 openssh',
    ]);
    assert.deepEqual(matchPackage(deb('openssh-client', '1:8.9p1-3ubuntu0.6', { source_name: 'openssh' }), 'Ubuntu:22.04:LTS', lookup), []);
    // Without its epoch the same upstream version sorts below every 1: version.
    assert.equal(matchPackage(deb('openssh', '9.9p1-1'), 'Ubuntu:22.04:LTS', lookup).length, 3);
  });
});

describe('rpm matching (binary name and source RPM name)', () => {
  it('parses SOURCERPM names', () => {
    assert.deepEqual(parseSourceRpm('openssl-3.0.7-24.el9.src.rpm'), { name: 'openssl', version: '3.0.7', release: '24.el9' });
    assert.deepEqual(parseSourceRpm('python3.11-pip-22.3.1-4.el9_3.1.src.rpm'), { name: 'python3.11-pip', version: '22.3.1', release: '4.el9_3.1' });
    assert.equal(parseSourceRpm('garbage'), null);
    assert.equal(parseSourceRpm('a-b.src.rpm'), null);
  });

  it('AlmaLinux: matches the binary name, once per CVE even when the source name matches too', () => {
    const findings = matchPackage(rpm('openssl-libs', '1:3.0.7-16.el9_2', 'openssl-3.0.7-16.el9_2.src.rpm'), 'AlmaLinux:9', lookup);
    assert.deepEqual(brief(findings), ['CVE-2023-3817 medium fixed 1:3.0.7-18.el9_2 openssl-libs']);
    assert.deepEqual(matchPackage(rpm('openssl-libs', '1:3.0.7-18.el9_2', 'openssl-3.0.7-18.el9_2.src.rpm'), 'AlmaLinux:9', lookup), []);
  });

  it('never assumes epoch 0 for the source RPM: it takes the binary epoch', () => {
    // openssl-perl is not named by ALSA-2023:5245; only its source "openssl" is.
    const fixedPerl = rpm('openssl-perl', '1:3.0.7-18.el9_2', 'openssl-3.0.7-18.el9_2.src.rpm');
    assert.deepEqual(matchIdentities(fixedPerl), [
      { name: 'openssl-perl', version: '1:3.0.7-18.el9_2' },
      { name: 'openssl', version: '1:3.0.7-18.el9_2' },
    ]);
    assert.deepEqual(matchPackage(fixedPerl, 'AlmaLinux:9', lookup), []);
    // Epoch given as a separate field works the same.
    assert.deepEqual(matchPackage(rpm('openssl-perl', '3.0.7-18.el9_2', 'openssl-3.0.7-18.el9_2.src.rpm', { epoch: 1 }), 'AlmaLinux:9', lookup), []);
    const oldPerl = matchPackage(rpm('openssl-perl', '3.0.7-16.el9_2', 'openssl-3.0.7-16.el9_2.src.rpm', { epoch: '1' }), 'AlmaLinux:9', lookup);
    assert.deepEqual(brief(oldPerl), ['CVE-2023-3817 medium fixed 1:3.0.7-18.el9_2 openssl']);
    // A package that really has no epoch compares as rpm does (epoch 0 < 1): still affected.
    assert.equal(matchPackage(rpm('openssl-perl', '3.0.7-18.el9_2', 'openssl-3.0.7-18.el9_2.src.rpm'), 'AlmaLinux:9', lookup).length, 1);
  });

  it('Rocky: compares el9_2.N releases', () => {
    const pkg = (release: string) => rpm('glibc-common', `2.34-${release}`, `glibc-2.34-${release}.src.rpm`);
    assert.deepEqual(brief(matchPackage(pkg('60.el9_2.3'), 'Rocky Linux:9', lookup)), ['CVE-2023-4911 high fixed 2.34-60.el9_2.7 glibc-common']);
    assert.equal(matchPackage(pkg('60.el9'), 'Rocky Linux:9', lookup).length, 1);
    assert.deepEqual(matchPackage(pkg('60.el9_2.7'), 'Rocky Linux:9', lookup), []);
    assert.deepEqual(matchPackage(pkg('83.el9_3.7'), 'Rocky Linux:9', lookup), []);
  });

  it('SUSE: matches the source RPM name', () => {
    const findings = matchPackage(rpm('libxml2-2', '2.10.3-150500.5.14.1', 'libxml2-2.10.3-150500.5.14.1.src.rpm'), 'openSUSE:Leap 15.6', lookup);
    assert.deepEqual(brief(findings), ['CVE-2024-25062 high fixed 2.10.3-150500.5.17.1 libxml2']);
    assert.equal(findings[0]!.cvss_score, 7.5);
  });

  it('handles several intervals and an open-ended one', () => {
    const at = (v: string) => brief(matchPackage(rpm('example-daemon', v, null), 'AlmaLinux:9', lookup));
    assert.deepEqual(at('1:1.9-1.el9'), []);
    assert.deepEqual(at('1:2.0-1.el9'), ['CVE-2024-0001 critical fixed 1:2.0-5.el9 example-daemon']);
    assert.deepEqual(at('1:2.5-1.el9'), []);
    assert.deepEqual(at('1:3.1-1.el9'), ['CVE-2024-0001 critical not-fixed - example-daemon']);
  });
});

describe('injected version schemes', () => {
  const row = (extra: Partial<AdvisoryRow>): AdvisoryRow => ({
    id: 'T-1', cve_ids: ['CVE-2024-1111'], ecosystem: 'T', package_name: 'p', purl: null, ranges: [], versions: [],
    severity: 'high', severity_source: 'distro', cvss_vector: null, cvss_score: null, urgency: 'high', wont_fix: false,
    summary: '', modified: null, published: null, ...extra,
  });
  const numeric: VersionScheme = { name: 'numeric', compare: (a, b) => Number(a) - Number(b) };

  it('uses the given comparator, with OSV semantics for each event', () => {
    const l = advisoryLookupFromRows([
      row({ ranges: [{ introduced: '10', last_affected: '20' }] }),
      row({ id: 'T-2', cve_ids: ['CVE-2024-2222'], ranges: [{ introduced: '0', limit: '5' }] }),
      row({ id: 'T-3', cve_ids: ['CVE-2024-3333'], versions: ['30'] }),
    ]);
    const at = (v: string) => matchPackage(deb('p', v), 'T', l, { scheme: numeric }).map((f) => `${f.cve_id}:${f.fix_state}`);
    assert.deepEqual(at('9'), []);
    assert.deepEqual(at('10'), ['CVE-2024-1111:not-fixed']);
    assert.deepEqual(at('20'), ['CVE-2024-1111:not-fixed']);
    assert.deepEqual(at('21'), []);
    assert.deepEqual(at('4'), ['CVE-2024-2222:not-fixed']);
    assert.deepEqual(at('5'), []);
    assert.deepEqual(at('30.0'), ['CVE-2024-3333:not-fixed'], 'versions[] compare by scheme equality');
  });

  it('skips advisory versions the scheme cannot read instead of throwing', () => {
    const throwing: VersionScheme = { name: 'strict', compare: (a, b) => { if (a === 'bad' || b === 'bad') throw new Error('bad'); return a.localeCompare(b); } };
    const l = advisoryLookupFromRows([row({ ranges: [{ introduced: '0', fixed: 'bad' }] }), row({ id: 'T-2', cve_ids: ['CVE-2024-2'], ranges: [{ introduced: '0' }] })]);
    assert.deepEqual(matchPackage(deb('p', '1'), 'T', l, { scheme: throwing }).map((f) => f.cve_id), ['CVE-2024-2']);
    const dpkg = advisoryLookupFromRows([row({ ranges: [{ introduced: '0', fixed: 'not a version!' }] })]);
    assert.deepEqual(matchPackage(deb('p', '1.0-1'), 'T', dpkg), []);
  });

  it('uses the advisory id when it names no CVE', () => {
    const l = advisoryLookupFromRows([row({ cve_ids: [], id: 'DSA-1-1', ranges: [{ introduced: '0' }] })]);
    assert.deepEqual(matchPackage(deb('p', '1.0'), 'T', l).map((f) => f.cve_id), ['DSA-1-1']);
  });
});

describe('version decisions agree with the real tools', () => {
  const debPairs: Array<[string, string]> = [
    ['3.0.11-1~deb12u1', '3.0.11-1~deb12u2'],
    ['3.0.11-1', '3.0.11-1~deb12u2'],
    ['1:8.9p1-3ubuntu0.4', '1:8.9p1-3ubuntu0.6'],
    ['8.9p1-3ubuntu0.10', '1:8.9p1-3ubuntu0.6'],
    ['2.9.14+dfsg-1.3+b1', '2.9.14+dfsg-1.3+deb12u1'],
    ['1.2-3+b1', '1.2-3'],
    ['1.0~rc1-1', '1.0-1'],
    ['2.36-9+deb12u4', '2.36-9+deb12u10'],
  ];
  it('deb: affected ⇔ dpkg --compare-versions installed lt fixed', () => {
    for (const [installed, fixed] of debPairs) {
      const l = advisoryLookupFromRows([
        { id: 'D', cve_ids: ['CVE-2024-1'], ecosystem: 'Debian:12', package_name: 'p', purl: null, ranges: [{ introduced: '0', fixed }], versions: [],
          severity: 'low', severity_source: 'distro', cvss_vector: null, cvss_score: null, urgency: null, wont_fix: false, summary: '', modified: null, published: null },
      ]);
      const affected = matchPackage(deb('p', installed, { source_version: installed }), 'Debian:12', l, { scheme: DPKG_SCHEME }).length > 0;
      const dpkg = spawnSync('dpkg', ['--compare-versions', installed, 'lt', fixed]).status === 0;
      assert.equal(affected, dpkg, `${installed} vs ${fixed}`);
    }
  });

  const rpmPairs: Array<[string, string]> = [
    ['1:3.0.7-16.el9_2', '1:3.0.7-18.el9_2'],
    ['3.0.7-24.el9', '1:3.0.7-18.el9_2'],
    ['2.34-60.el9', '2.34-60.el9_2.7'],
    ['2.34-60.el9_2.10', '2.34-60.el9_2.7'],
    ['1.0~rc1-1', '1.0-1'],
    ['1.0^git1-1', '1.0-1'],
    ['2.10.3-150500.5.14.1', '2.10.3-150500.5.17.1'],
  ];
  it('rpm: affected ⇔ rpm.vercmp(installed, fixed) < 0', () => {
    for (const [installed, fixed] of rpmPairs) {
      const row: AdvisoryRow = { id: 'R', cve_ids: ['CVE-2024-1'], ecosystem: 'AlmaLinux:9', package_name: 'p', purl: null, ranges: [{ introduced: '0', fixed }], versions: [],
        severity: 'low', severity_source: 'distro', cvss_vector: null, cvss_score: null, urgency: null, wont_fix: false, summary: '', modified: null, published: null };
      const affected = matchPackage(rpm('p', installed, null), 'AlmaLinux:9', advisoryLookupFromRows([row]), { scheme: RPM_SCHEME }).length > 0;
      const out = execFileSync('rpm', ['--eval', `%{lua: print(rpm.vercmp("${installed}", "${fixed}"))}`], { encoding: 'utf8' }).trim();
      assert.equal(affected, Number(out) < 0, `${installed} vs ${fixed}: rpm says ${out}`);
    }
  });
});
