import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { enrich, isEnrichmentFresh } from '../../../src/domain/security/enrich.js';
import { finding } from '../../fixtures/security/finding.js';

describe('enrich', () => {
  const epss = new Map([['CVE-2023-4911', { epss: 0.79331, percentile: 0.98513 }]]);
  const kev = new Set(['CVE-2023-4911']);
  const now = new Date('2024-06-02T08:00:00Z');
  const findings = [finding('CVE-2023-4911', 'high'), finding('CVE-2023-5678', 'low')];

  it('fills EPSS and KEV from fresh data', () => {
    const out = enrich(findings, epss, kev, { now, epssKevFetchedAt: new Date('2024-06-01T09:00:00Z') });
    assert.deepEqual(out.map((f) => [f.cve_id, f.epss, f.epss_percentile, f.in_kev]), [
      ['CVE-2023-4911', 0.79331, 0.98513, true],
      ['CVE-2023-5678', null, null, false],
    ]);
    assert.equal(findings[0]!.in_kev, false, 'input is not mutated');
  });

  it('leaves KEV out (null) when the data is older than 24 h or was never fetched', () => {
    const stale = enrich(findings, epss, kev, { now, epssKevFetchedAt: new Date('2024-06-01T07:59:59Z') });
    assert.deepEqual(stale.map((f) => f.in_kev), [null, null]);
    assert.equal(stale[0]!.epss, 0.79331, 'EPSS is kept');
    const never = enrich(findings, epss, kev, { now, epssKevFetchedAt: null });
    assert.deepEqual(never.map((f) => [f.in_kev, f.epss]), [[null, null], [null, null]]);
    assert.equal(isEnrichmentFresh(now, new Date('2024-06-01T08:00:00Z')), true);
    assert.equal(isEnrichmentFresh(now, new Date('2024-06-03T08:00:00Z')), false, 'a date in the future is not trusted');
  });
});
