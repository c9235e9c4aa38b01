import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_CVE_POLICY, evaluatePolicy, type CvePolicy } from '../../../src/domain/security/policy.js';
import { isoUtcSeconds } from '../../../src/domain/time.js';
import { decide, expireDecisions, rescanTransition, slaWarnings, type DecideResult, type DecideSuccess } from '../../../src/domain/security/state-machine.js';
import { finding } from '../../fixtures/security/finding.js';

const now = new Date('2026-11-21T10:00:00.123Z');
const pending = { status: 'pending_review', worst_severity: 'high' as const };

function ok(r: DecideResult): DecideSuccess {
  assert.ok(r.ok, r.ok ? '' : `${r.code}: ${r.detail}`);
  return r;
}
function err(r: DecideResult): [number, string] {
  assert.equal(r.ok, false);
  return r.ok ? [0, ''] : [r.status, r.code];
}

describe('decide', () => {
  it('accept_risk (and its aliases) → accepted_risk, in the index, optional expiry', () => {
    const r = ok(decide(pending, { action: 'accept_risk', justification: '  Not reachable: feature disabled  ', expires_in_days: 30 }, now, DEFAULT_CVE_POLICY));
    assert.equal(r.new_status, 'accepted_risk');
    assert.equal(r.in_index, true);
    assert.deepEqual(r.decision_record, {
      action: 'accept_risk',
      justification: 'Not reachable: feature disabled',
      expires_at: '2026-12-21T10:00:00+00:00',
      target_version: null,
      cve_ids: [],
      decided_at: '2026-11-21T10:00:00+00:00',
    });
    assert.equal(r.audit_detail, 'action=accept_risk; justification="Not reachable: feature disabled"; expiry=2026-12-21T10:00:00+00:00');
    for (const alias of ['accepted', 'approve', 'accept', 'ACCEPT_RISK']) {
      const a = ok(decide(pending, { decision: alias, comment: 'ok' }, now, DEFAULT_CVE_POLICY));
      assert.equal(a.new_status, 'accepted_risk', alias);
      assert.equal(a.decision_record.expires_at, null);
      assert.equal(a.audit_detail, 'action=accept_risk; justification="ok"; expiry=never');
    }
  });

  it('accepts every expiry alias, as number or numeric string', () => {
    for (const key of ['expires_in_days', 'expires_days', 'expiry_days', 'expiry']) {
      const r = ok(decide(pending, { action: 'exception', justification: 'vendor fix pending', [key]: '7' }, now, DEFAULT_CVE_POLICY));
      assert.equal(r.new_status, 'exception');
      assert.equal(r.in_index, true);
      assert.equal(r.decision_record.expires_at, '2026-11-28T10:00:00+00:00', key);
    }
  });

  it('exception requires an expiry; reject refuses one; bad expiries are 422', () => {
    assert.deepEqual(err(decide(pending, { action: 'exception', justification: 'x' }, now, DEFAULT_CVE_POLICY)), [422, 'expiry_required']);
    assert.deepEqual(err(decide(pending, { action: 'reject', justification: 'x', expiry: 5 }, now, DEFAULT_CVE_POLICY)), [422, 'expiry_not_allowed']);
    for (const bad of [0, -1, 1.5, 'ten', '3d', 99999, true]) {
      assert.deepEqual(err(decide(pending, { action: 'accept_risk', justification: 'x', expires_in_days: bad }, now, DEFAULT_CVE_POLICY)), [422, 'expiry_invalid'], String(bad));
    }
  });

  it('reject / rejected → quarantined, out of the index, never expires', () => {
    const r = ok(decide(pending, { decision: 'rejected', justification: 'malicious maintainer', cve_ids: ['CVE-2024-3094'] }, now, DEFAULT_CVE_POLICY));
    assert.deepEqual([r.new_status, r.in_index, r.decision_record.expires_at, r.decision_record.cve_ids], ['quarantined', false, null, ['CVE-2024-3094']]);
    assert.equal(r.audit_detail, 'action=reject; justification="malicious maintainer"; expiry=never');
  });

  it('upgrade_required needs a target version and sets the SLA deadline of the worst severity', () => {
    assert.deepEqual(err(decide(pending, { action: 'upgrade_required', justification: 'x' }, now, DEFAULT_CVE_POLICY)), [422, 'target_version_required']);
    const r = ok(decide(pending, { action: 'upgrade_required', justification: 'take 3.0.13', target_version: '3.0.13-1~deb12u1', expiry: 3 }, now, DEFAULT_CVE_POLICY));
    assert.deepEqual([r.new_status, r.in_index, r.decision_record.target_version, r.decision_record.expires_at], ['upgrade_required', false, '3.0.13-1~deb12u1', null]);
    assert.equal(r.sla_deadline, '2026-12-21T10:00:00+00:00');
    const policy: CvePolicy = { ...DEFAULT_CVE_POLICY, sla_days: { ...DEFAULT_CVE_POLICY.sla_days, critical: 2 } };
    const crit = ok(decide({ status: 'pending_review', worst_severity: 'critical' }, { action: 'upgrade_required', justification: 'x', target_version: '2' }, now, policy));
    assert.equal(crit.sla_deadline, '2026-11-23T10:00:00+00:00');
  });

  it('requires a non-blank justification (or comment)', () => {
    for (const body of [{ action: 'accept_risk' }, { action: 'accept_risk', justification: '   ' }, { action: 'accept_risk', comment: 42 }]) {
      assert.deepEqual(err(decide(pending, body, now, DEFAULT_CVE_POLICY)), [422, 'justification_required']);
    }
  });

  it('refuses unknown actions and packages not awaiting review', () => {
    assert.deepEqual(err(decide(pending, { action: 'approve_all', justification: 'x' }, now, DEFAULT_CVE_POLICY)), [422, 'invalid_action']);
    assert.deepEqual(err(decide(pending, null, now, DEFAULT_CVE_POLICY)), [422, 'invalid_action']);
    for (const status of ['published', 'quarantined', 'rejected']) {
      assert.deepEqual(err(decide({ status }, { action: 'accept_risk', justification: 'x' }, now, DEFAULT_CVE_POLICY)), [409, 'not_in_review'], status);
    }
    for (const status of ['upgrade_required', 'accepted_risk', 'exception']) {
      assert.equal(decide({ status }, { action: 'reject', justification: 'x' }, now, DEFAULT_CVE_POLICY).ok, true, status);
    }
  });

  it('keeps the audit detail on one line, unforgeable, and validates cve_ids', () => {
    const r = ok(decide(pending, { action: 'accept', justification: 'line one\nline two', cve_ids: 'CVE-1, CVE-2,CVE-1' }, now, DEFAULT_CVE_POLICY));
    assert.equal(r.audit_detail, 'action=accept_risk; justification="line one\\nline two"; expiry=never');
    const forged = ok(decide(pending, { action: 'accept', justification: 'fine"; expiry=never; action=reject; x="', expires_in_days: 30 }, now, DEFAULT_CVE_POLICY));
    const fields = /^action=(\w+); justification=("(?:[^"\\]|\\.)*"); expiry=(\S+)$/.exec(forged.audit_detail);
    assert.ok(fields, forged.audit_detail);
    assert.deepEqual([fields[1], JSON.parse(fields[2]!), fields[3]], ['accept_risk', 'fine"; expiry=never; action=reject; x="', forged.decision_record.expires_at]);
    assert.equal(r.decision_record.justification, 'line one\nline two');
    assert.deepEqual(r.decision_record.cve_ids, ['CVE-1', 'CVE-2']);
    assert.deepEqual(err(decide(pending, { action: 'accept', justification: 'x', cve_ids: [1] }, now, DEFAULT_CVE_POLICY)), [422, 'invalid_cve_ids']);
  });
});

describe('expiry and SLA jobs', () => {
  it('returns expired accepted risks and exceptions to pending_review', () => {
    const rows = [
      { id: 1, status: 'accepted_risk', expires_at: '2026-11-21T09:59:59+00:00' },
      { id: 2, status: 'exception', expires_at: new Date('2026-11-21T10:00:00.123Z') },
      { id: 3, status: 'accepted_risk', expires_at: '2026-11-22T00:00:00+00:00' },
      { id: 4, status: 'accepted_risk', expires_at: null },
      { id: 5, status: 'quarantined', expires_at: '2020-01-01T00:00:00+00:00' },
    ];
    const out = expireDecisions(now, rows);
    assert.deepEqual(out.map((o) => [o.row.id, o.new_status, o.in_index]), [[1, 'pending_review', false], [2, 'pending_review', false]]);
  });

  it('warns for deadlines within 7 days, including overdue ones', () => {
    const rows = [
      { id: 1, status: 'pending_review', sla_deadline: '2026-11-28T10:00:00+00:00' },
      { id: 2, status: 'pending_review', sla_deadline: '2026-11-28T10:00:01+00:00' },
      { id: 3, status: 'upgrade_required', sla_deadline: '2026-11-20T10:00:00+00:00' },
      { id: 4, status: 'published', sla_deadline: '2026-11-22T10:00:00+00:00' },
      { id: 5, status: 'pending_review', sla_deadline: null },
    ];
    assert.deepEqual(slaWarnings(new Date('2026-11-21T10:00:00Z'), rows).map((w) => [w.row.id, w.days_remaining, w.overdue]), [
      [1, 7, false],
      [3, -1, true],
    ]);
  });

  it('formats timestamps with an explicit UTC offset', () => {
    assert.equal(isoUtcSeconds(new Date('2026-11-21T10:00:00.999Z')), '2026-11-21T10:00:00+00:00');
  });
});

describe('rescanTransition', () => {
  const policy: CvePolicy = { ...DEFAULT_CVE_POLICY, critical: 'block' };
  it('quarantines an indexed package whose findings now require block', () => {
    const evaluation = evaluatePolicy([finding('CVE-2024-1', 'critical'), finding('CVE-2024-2', 'high')], policy);
    for (const status of ['published', 'accepted_risk', 'exception']) {
      const t = rescanTransition({ status, covered_cve_ids: ['CVE-2024-1', 'CVE-2024-2'] }, evaluation);
      assert.deepEqual([t?.new_status, t?.in_index, t?.cve_ids], ['quarantined', false, ['CVE-2024-1']], status);
    }
  });

  it('sends back to review only for CVEs the decision record does not cover', () => {
    const evaluation = evaluatePolicy([finding('CVE-2024-1', 'high'), finding('CVE-2024-9', 'medium')], DEFAULT_CVE_POLICY);
    assert.equal(rescanTransition({ status: 'accepted_risk', covered_cve_ids: ['CVE-2024-1'] }, evaluation), null);
    const t = rescanTransition({ status: 'exception', covered_cve_ids: ['CVE-2024-7'] }, evaluation);
    assert.deepEqual([t?.new_status, t?.cve_ids], ['pending_review', ['CVE-2024-1']]);
    const published = rescanTransition({ status: 'published' }, evaluation);
    assert.equal(published?.new_status, 'pending_review');
    const kev = evaluatePolicy([finding('CVE-2024-5', 'low', { in_kev: true })], DEFAULT_CVE_POLICY);
    assert.equal(rescanTransition({ status: 'published' }, kev)?.new_status, 'pending_review');
  });

  it('leaves packages outside the index and warn-only findings alone', () => {
    const blocking = evaluatePolicy([finding('CVE-2024-1', 'critical')], policy);
    assert.equal(rescanTransition({ status: 'pending_review' }, blocking), null);
    assert.equal(rescanTransition({ status: 'quarantined' }, blocking), null);
    assert.equal(rescanTransition({ status: 'published' }, evaluatePolicy([finding('CVE-2024-1', 'medium')], DEFAULT_CVE_POLICY)), null);
  });
});
