import { describe, expect, it } from 'vitest';
import { checkDecision, type DecisionForm } from './decide';

const form = (over: Partial<DecisionForm>): DecisionForm => ({ action: 'accept_risk', justification: 'Not reachable: the parser is unused', expiryDays: '', targetVersion: '', ...over });

describe('the decision contract', () => {
  it('requires a justification for every action', () => {
    for (const action of ['accept_risk', 'exception', 'upgrade_required', 'reject'] as const) {
      const { problems, body } = checkDecision(form({ action, justification: '   ', expiryDays: '30', targetVersion: '2.0' }));
      expect(body).toBeNull();
      expect(problems.justification).toMatch(/required/);
    }
  });

  it('requires an expiry for an exception, and keeps it optional for accept_risk', () => {
    expect(checkDecision(form({ action: 'exception' })).problems.expiryDays).toMatch(/expiry/);
    expect(checkDecision(form({ action: 'exception', expiryDays: '30' })).body).toEqual({ action: 'exception', justification: 'Not reachable: the parser is unused', expires_in_days: 30 });
    expect(checkDecision(form({})).body).toEqual({ action: 'accept_risk', justification: 'Not reachable: the parser is unused' });
  });

  it('refuses an expiry that is not a whole number of days from 1 to 3650', () => {
    for (const bad of ['0', '-3', '1.5', 'soon', '3651']) {
      expect(checkDecision(form({ expiryDays: bad })).problems.expiryDays, bad).toBeDefined();
    }
  });

  it('requires a target version for upgrade_required and sends no expiry with it', () => {
    expect(checkDecision(form({ action: 'upgrade_required' })).problems.targetVersion).toBeDefined();
    expect(checkDecision(form({ action: 'upgrade_required', targetVersion: ' 1.2.3 ' })).body).toEqual({ action: 'upgrade_required', justification: 'Not reachable: the parser is unused', target_version: '1.2.3' });
  });
});
