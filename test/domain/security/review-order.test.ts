import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareByRisk, compareBySla, reviewComparator, reviewKeyOf, type ReviewKey } from '../../../src/domain/security/review-order.js';
import { finding } from '../../fixtures/security/finding.js';

describe('review queue order', () => {
  const key = (name: string, k: Partial<ReviewKey>): ReviewKey => ({ name, version: '1', in_kev: false, epss: null, cvss_score: null, sla_deadline: null, ...k });

  it('KEV first, then EPSS descending, then CVSS descending; unknowns last', () => {
    const items = [
      key('a', { epss: 0.2, cvss_score: 9.8 }),
      key('b', { epss: 0.9, cvss_score: 5.0 }),
      key('c', { in_kev: true, epss: 0.01 }),
      key('d', { epss: 0.2, cvss_score: 7.5 }),
      key('e', {}),
      key('f', { epss: 0.2, cvss_score: null }),
      key('g', { in_kev: null, epss: 0.5 }),
    ];
    assert.deepEqual([...items].sort(compareByRisk).map((i) => i.name), ['c', 'b', 'g', 'a', 'd', 'f', 'e']);
  });

  it('sort=sla: earliest deadline first, then EPSS', () => {
    const items = [
      key('late', { sla_deadline: '2026-12-30T00:00:00+00:00', epss: 0.9 }),
      key('none', { sla_deadline: null, epss: 0.99 }),
      key('soon-low', { sla_deadline: '2026-11-25T00:00:00+00:00', epss: 0.1 }),
      key('soon-high', { sla_deadline: new Date('2026-11-25T00:00:00Z'), epss: 0.5 }),
    ];
    assert.deepEqual([...items].sort(reviewComparator('sla')).map((i) => i.name), ['soon-high', 'soon-low', 'late', 'none']);
    assert.equal(reviewComparator(undefined), compareByRisk);
    assert.equal(reviewComparator('sla'), compareBySla);
  });

  it('aggregates a package’s findings into its keys', () => {
    const k = reviewKeyOf({ name: 'openssl', version: '1' }, [
      finding('CVE-1', 'high', { epss: 0.1, cvss_score: 7.5, in_kev: false }),
      finding('CVE-2', 'low', { epss: 0.4, cvss_score: 3.1, in_kev: true }),
    ]);
    assert.deepEqual([k.in_kev, k.epss, k.cvss_score, k.sla_deadline], [true, 0.4, 7.5, null]);
    assert.equal(reviewKeyOf({ name: 'x', version: '1' }, [finding('CVE-1', 'high', { in_kev: null })]).in_kev, null);
  });
});
