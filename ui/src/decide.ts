/** The review decision contract (src/domain/security/state-machine.ts), checked before sending. */
export type DecisionAction = 'accept_risk' | 'exception' | 'upgrade_required' | 'reject';

export const ACTIONS: Array<{ value: DecisionAction; text: string }> = [
  { value: 'accept_risk', text: 'Accept the risk (publish)' },
  { value: 'exception', text: 'Exception (publish until an expiry)' },
  { value: 'upgrade_required', text: 'Upgrade required (withhold until a fixed version)' },
  { value: 'reject', text: 'Reject (quarantine, permanent)' },
];

export const MAX_EXPIRY_DAYS = 3650;

export interface DecisionForm {
  action: DecisionAction;
  justification: string;
  expiryDays: string;
  targetVersion: string;
}

export interface DecisionBody {
  action: DecisionAction;
  justification: string;
  expires_in_days?: number;
  target_version?: string;
}

/** Each field's problem, or the body to send when there is none. */
export function checkDecision(form: DecisionForm): { problems: Partial<Record<keyof DecisionForm, string>>; body: DecisionBody | null } {
  const problems: Partial<Record<keyof DecisionForm, string>> = {};
  const justification = form.justification.trim();
  if (!justification) problems.justification = 'A justification is required for every decision.';
  const expiryText = form.expiryDays.trim();
  const expiry = expiryText === '' ? undefined : Number(expiryText);
  if (expiry !== undefined && (!Number.isInteger(expiry) || expiry < 1 || expiry > MAX_EXPIRY_DAYS)) {
    problems.expiryDays = `The expiry is a whole number of days from 1 to ${MAX_EXPIRY_DAYS}.`;
  } else if (form.action === 'exception' && expiry === undefined) {
    problems.expiryDays = 'An exception needs an expiry.';
  }
  const targetVersion = form.targetVersion.trim();
  if (form.action === 'upgrade_required' && !targetVersion) problems.targetVersion = 'Name the version that must replace this one.';
  if (Object.keys(problems).length > 0) return { problems, body: null };
  const body: DecisionBody = { action: form.action, justification };
  if ((form.action === 'accept_risk' || form.action === 'exception') && expiry !== undefined) body.expires_in_days = expiry;
  if (form.action === 'upgrade_required') body.target_version = targetVersion;
  return { problems, body };
}
