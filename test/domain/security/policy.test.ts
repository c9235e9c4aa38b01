import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../../../src/domain/errors.js';
import { DEFAULT_CVE_POLICY, evaluatePolicy, parseCvePolicy, slaDeadline, type CvePolicy } from '../../../src/domain/security/policy.js';
import { finding } from '../../fixtures/security/finding.js';

describe('evaluatePolicy', () => {
  it('publishes a package without findings', () => {
    const r = evaluatePolicy([], DEFAULT_CVE_POLICY);
    assert.equal(r.action, 'allow');
    assert.equal(r.outcome_status, 'published');
    assert.equal(r.cve_status, 'no_findings');
    assert.equal(r.worst_severity, null);
  });

  it('applies the defaults: critical/high review, medium warn, low allow, negligible allow', () => {
    const low = evaluatePolicy([finding('CVE-1', 'low'), finding('CVE-2', 'negligible')], DEFAULT_CVE_POLICY);
    assert.deepEqual([low.action, low.outcome_status, low.cve_status, low.reasons], ['allow', 'published', 'allowed', []]);
    const medium = evaluatePolicy([finding('CVE-1', 'low'), finding('CVE-2', 'medium')], DEFAULT_CVE_POLICY);
    assert.deepEqual([medium.action, medium.outcome_status, medium.cve_status], ['warn', 'published', 'warnings']);
    assert.deepEqual(medium.reasons, ['CVE-2 (medium) in openssl: warn']);
    const high = evaluatePolicy([finding('CVE-1', 'medium'), finding('CVE-2', 'high')], DEFAULT_CVE_POLICY);
    assert.deepEqual([high.action, high.outcome_status, high.cve_status], ['review', 'pending_review', 'pending_review']);
    assert.deepEqual(high.counts, { critical: 0, high: 1, medium: 1, low: 0, negligible: 0 });
    assert.equal(high.worst_severity, 'high');
  });

  it('lets the strongest action win and blocks into quarantine', () => {
    const policy: CvePolicy = { ...DEFAULT_CVE_POLICY, critical: 'block' };
    const r = evaluatePolicy([finding('CVE-1', 'high'), finding('CVE-2', 'critical'), finding('CVE-3', 'medium')], policy);
    assert.deepEqual([r.action, r.outcome_status, r.cve_status], ['block', 'quarantined', 'blocked']);
    assert.deepEqual(r.finding_actions, [
      { cve_id: 'CVE-1', action: 'review' },
      { cve_id: 'CVE-2', action: 'block' },
      { cve_id: 'CVE-3', action: 'warn' },
    ]);
  });

  it('treats a KEV-listed CVE at least as kev_action; unknown KEV is not escalated', () => {
    const kevLow = [finding('CVE-2023-4911', 'low', { in_kev: true })];
    assert.equal(evaluatePolicy(kevLow, DEFAULT_CVE_POLICY).action, 'review');
    assert.equal(evaluatePolicy(kevLow, DEFAULT_CVE_POLICY, { kevAction: 'block' }).outcome_status, 'quarantined');
    assert.match(evaluatePolicy(kevLow, DEFAULT_CVE_POLICY).reasons[0]!, /listed in KEV/);
    const blockAll: CvePolicy = { ...DEFAULT_CVE_POLICY, low: 'block' };
    assert.equal(evaluatePolicy(kevLow, blockAll).action, 'block', 'KEV never weakens a stronger policy');
    assert.equal(evaluatePolicy([finding('CVE-1', 'low', { in_kev: null })], DEFAULT_CVE_POLICY).action, 'allow');
    assert.equal(evaluatePolicy([finding('CVE-1', 'negligible', { in_kev: true })], DEFAULT_CVE_POLICY).action, 'review');
  });

  it('computes the SLA deadline of the worst severity', () => {
    const from = new Date('2026-11-21T10:00:00Z');
    assert.equal(slaDeadline('critical', DEFAULT_CVE_POLICY, from)?.toISOString(), '2026-11-28T10:00:00.000Z');
    assert.equal(slaDeadline('high', DEFAULT_CVE_POLICY, from)?.toISOString(), '2026-12-21T10:00:00.000Z');
    assert.equal(slaDeadline('low', DEFAULT_CVE_POLICY, from)?.toISOString(), '2027-05-20T10:00:00.000Z');
    assert.equal(slaDeadline('negligible', DEFAULT_CVE_POLICY, from), null);
    assert.equal(slaDeadline(null, DEFAULT_CVE_POLICY, from), null);
  });
});

describe('parseCvePolicy', () => {
  it('merges a partial body onto the current policy', () => {
    const p = parseCvePolicy({ critical: 'block', sla_days: { critical: 3 } });
    assert.deepEqual(p, { ...DEFAULT_CVE_POLICY, critical: 'block', sla_days: { ...DEFAULT_CVE_POLICY.sla_days, critical: 3 } });
    assert.equal(DEFAULT_CVE_POLICY.critical, 'review', 'defaults are not mutated');
  });

  it('rejects unknown keys, bad actions and bad SLA values with field errors', () => {
    assert.throws(
      () => parseCvePolicy({ critical: 'deny', extreme: 'block', sla_days: { high: 0, low: 'x' } }),
      (err: unknown) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.code, 'invalid_policy');
        const locs = (err.extra.errors as Array<{ loc: string[] }>).map((e) => e.loc.join('.'));
        assert.deepEqual(locs.sort(), ['body.critical', 'body.extreme', 'body.sla_days.high', 'body.sla_days.low']);
        return true;
      },
    );
    assert.throws(() => parseCvePolicy(null), DomainError);
    assert.throws(() => parseCvePolicy({ sla_days: [] }), DomainError);
  });
});
