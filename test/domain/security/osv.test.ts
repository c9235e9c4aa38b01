import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { distroEcosystems, ecosystemForCodename, eventsToIntervals, normalizeOsvRecord } from '../../../src/domain/security/osv.js';
import { severityFromUrgency } from '../../../src/domain/security/severity.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/security/osv');
const load = (name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));

describe('normalizeOsvRecord', () => {
  it('flattens a Debian DSA naming a source package', () => {
    const { rows, skipped } = normalizeOsvRecord(load('DSA-5532-1.json'));
    assert.equal(skipped, null);
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.equal(row.id, 'DSA-5532-1');
    assert.deepEqual(row.cve_ids, ['CVE-2023-5363']);
    assert.equal(row.ecosystem, 'Debian:12');
    assert.equal(row.package_name, 'openssl');
    assert.deepEqual(row.ranges, [{ introduced: '0', fixed: '3.0.11-1~deb12u2' }]);
    assert.deepEqual(row.versions, ['3.0.9-1', '3.0.11-1~deb12u1']);
    assert.equal(row.severity, null, 'no vector and no urgency: unknown');
    assert.equal(row.summary, 'openssl - security update');
    assert.equal(row.modified, '2023-10-28T12:00:00Z');
    assert.equal(row.wont_fix, false);
  });

  it('makes one row per affected package and ecosystem, with the Debian urgency', () => {
    const { rows } = normalizeOsvRecord(load('DEBIAN-CVE-2023-5678.json'));
    assert.deepEqual(
      rows.map((r) => [r.ecosystem, r.package_name, r.ranges[0]?.fixed]),
      [
        ['Debian:12', 'openssl', '3.0.13-1~deb12u1'],
        ['Debian:11', 'openssl', '1.1.1w-0+deb11u2'],
      ],
    );
    assert.deepEqual(rows[0]!.cve_ids, ['CVE-2023-5678']);
    assert.equal(rows[0]!.urgency, 'low');
    assert.equal(rows[0]!.severity, 'low');
    assert.equal(rows[0]!.severity_source, 'distro');
    assert.match(rows[0]!.summary, /^Issue summary: Generating excessively long X9\.42 DH keys/);
  });

  it('prefers the CVSS vector over the Ubuntu priority, and keeps the priority', () => {
    const { rows } = normalizeOsvRecord(load('UBUNTU-CVE-2023-48795.json'));
    const jammy = rows.find((r) => r.ecosystem === 'Ubuntu:22.04:LTS')!;
    assert.equal(jammy.cvss_vector, 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:H/A:N');
    assert.equal(jammy.cvss_score, 5.9);
    assert.equal(jammy.severity, 'medium');
    assert.equal(jammy.severity_source, 'cvss_v3');
    assert.equal(jammy.urgency, 'medium');
    assert.deepEqual(jammy.cve_ids, ['CVE-2023-48795']);
    assert.equal(jammy.ranges[0]?.fixed, '1:8.9p1-3ubuntu0.6');
  });

  it('collects CVE ids from related[] (USN, ALSA, RLSA)', () => {
    assert.deepEqual(normalizeOsvRecord(load('USN-6560-1.json')).rows[0]!.cve_ids, ['CVE-2023-48795', 'CVE-2023-51384', 'CVE-2023-51385']);
    const alsa = normalizeOsvRecord(load('ALSA-2023-5245.json')).rows;
    assert.deepEqual(alsa.map((r) => r.package_name), ['openssl', 'openssl-libs', 'openssl-devel']);
    assert.deepEqual(alsa[0]!.cve_ids, ['CVE-2023-3817']);
    assert.equal(alsa[0]!.urgency, 'Moderate');
    assert.equal(alsa[0]!.severity, 'medium');
    const rlsa = normalizeOsvRecord(load('RLSA-2023-5453.json')).rows;
    assert.equal(rlsa[0]!.severity, 'high');
    assert.equal(rlsa[0]!.cvss_score, 7.8);
    assert.equal(rlsa[0]!.urgency, 'Important');
  });

  it('recognises "will not fix" markers', () => {
    assert.equal(normalizeOsvRecord(load('DEBIAN-CVE-2005-2541-ignored.json')).rows[0]!.wont_fix, true);
    const ubuntu = normalizeOsvRecord(load('UBUNTU-CVE-2022-3219-ignored.json')).rows[0]!;
    assert.equal(ubuntu.wont_fix, true);
    assert.equal(ubuntu.severity, 'low');
    assert.equal(normalizeOsvRecord(load('DEBIAN-CVE-2005-2541-ignored.json')).rows[0]!.severity, 'negligible');
    const deferred = {
      id: 'X-1',
      affected: [{ package: { ecosystem: 'Debian:12', name: 'a' }, ecosystem_specific: { status: 'deferred' }, ranges: [] }],
    };
    assert.equal(normalizeOsvRecord(deferred).rows[0]!.wont_fix, false);
  });

  it('scores CVSS v4 vectors when no v3 vector is given', () => {
    const row = normalizeOsvRecord(load('CVE-2024-0001-cvss4.json')).rows[0]!;
    assert.equal(row.cvss_score, 9.3);
    assert.equal(row.severity, 'critical');
    assert.equal(row.severity_source, 'cvss_v4');
    assert.deepEqual(row.ranges, [{ introduced: '1:2.0-1.el9', fixed: '1:2.0-5.el9' }, { introduced: '1:3.0-1.el9' }]);
  });

  it('skips withdrawn and malformed records without throwing', () => {
    assert.deepEqual(normalizeOsvRecord(load('withdrawn.json')), { rows: [], skipped: 'withdrawn' });
    for (const bad of [null, 42, 'x', [], {}, { id: '' }, { id: 'A' }, { id: 'A', affected: 'x' }]) {
      const r = normalizeOsvRecord(bad);
      assert.equal(r.rows.length, 0);
      assert.notEqual(r.skipped, null);
    }
    const tooMany = { id: 'A', affected: [{ package: { ecosystem: 'E', name: 'n' }, ranges: [{ type: 'ECOSYSTEM', events: new Array(5000).fill({ introduced: '0' }) }] }] };
    assert.equal(normalizeOsvRecord(tooMany).skipped, 'malformed range events');
  });

  it('merges a package listed twice in one record and ignores GIT ranges', () => {
    const record = {
      id: 'USN-1',
      affected: [
        { package: { ecosystem: 'Ubuntu:22.04:LTS', name: 'p' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1.0' }] }] },
        { package: { ecosystem: 'Ubuntu:22.04:LTS', name: 'p' }, ranges: [{ type: 'GIT', repo: 'x', events: [{ introduced: 'abc' }] }], versions: ['0.9'] },
      ],
    };
    const { rows } = normalizeOsvRecord(record);
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0]!.ranges, [{ introduced: '0', fixed: '1.0' }]);
    assert.deepEqual(rows[0]!.versions, ['0.9']);
    assert.deepEqual(rows[0]!.cve_ids, []);
  });
});

describe('eventsToIntervals', () => {
  it('pairs introduced with the following end event', () => {
    assert.deepEqual(eventsToIntervals([{ introduced: '0' }, { fixed: '1.2' }, { introduced: '1.5' }, { last_affected: '1.7' }, { introduced: '2.0' }, { limit: '2.5' }]), [
      { introduced: '0', fixed: '1.2' },
      { introduced: '1.5', last_affected: '1.7' },
      { introduced: '2.0', limit: '2.5' },
    ]);
    assert.deepEqual(eventsToIntervals([{ fixed: '1.0' }]), []);
    assert.equal(eventsToIntervals('nope'), null);
  });
});

describe('severityFromUrgency', () => {
  it('maps Debian, Ubuntu and Red Hat words', () => {
    const expected: Array<[string, string | null]> = [
      ['unimportant', 'negligible'], ['low', 'low'], ['low**', 'low'], ['medium', 'medium'], ['high', 'high'],
      ['negligible', 'negligible'], ['critical', 'critical'], ['Important', 'high'], ['Moderate', 'medium'], ['Low', 'low'],
      ['Critical', 'critical'], ['not yet assigned', null], ['end-of-life', null], ['', null],
    ];
    for (const [word, severity] of expected) assert.equal(severityFromUrgency(word), severity, word);
  });
});

describe('distribution ecosystems', () => {
  it('maps every codename of DECISIONS §6 with its format', () => {
    const table = Object.fromEntries(distroEcosystems().map((d) => [d.codename, `${d.format} ${d.ecosystem}`]));
    assert.deepEqual(table, {
      focal: 'deb Ubuntu:20.04:LTS',
      jammy: 'deb Ubuntu:22.04:LTS',
      noble: 'deb Ubuntu:24.04:LTS',
      bookworm: 'deb Debian:12',
      almalinux8: 'rpm AlmaLinux:8',
      almalinux9: 'rpm AlmaLinux:9',
      rocky8: 'rpm Rocky Linux:8',
      rocky9: 'rpm Rocky Linux:9',
      'centos-stream9': 'rpm CentOS:9',
      fedora: 'rpm Fedora:42',
      'opensuse-leap-15.6': 'rpm openSUSE:Leap 15.6',
    });
    assert.equal(ecosystemForCodename('bullseye'), undefined);
  });
});
