/**
 * What a pipeline branches on. Every command ends with one of these; `--help` and the README list
 * them. When several files are uploaded the highest outcome wins (rejected over quarantined over
 * held), and a transport or usage error (1) is reported only when no verdict was reached.
 */
export const EXIT = {
  /** Published, or the policy is satisfied. */
  ok: 0,
  /** Usage error, authentication failure, unreachable service, unexpected answer; `health`: degraded. */
  error: 1,
  /** Held for review (`pending_review`, `upgrade_required`). */
  held: 2,
  quarantined: 3,
  rejected: 4,
  /** `vulns --fail-on` found a finding at or above the threshold; `audit verify` a broken chain. */
  policyViolation: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code a package status stands for. */
export function exitCodeForStatus(status: string): ExitCode {
  switch (status) {
    case 'published':
    case 'accepted_risk':
    case 'exception':
      return EXIT.ok;
    case 'pending_review':
    case 'upgrade_required':
      return EXIT.held;
    case 'quarantined':
      return EXIT.quarantined;
    case 'rejected':
      return EXIT.rejected;
    default:
      return EXIT.error;
  }
}

/** The verdict of several outcomes: the worst verdict, or 1 when none was reached. */
export function worstOutcome(codes: readonly ExitCode[]): ExitCode {
  const verdicts = codes.filter((c) => c !== EXIT.error);
  if (verdicts.length < codes.length && verdicts.every((c) => c === EXIT.ok)) return EXIT.error;
  // The verdict codes are ordered by severity: held 2 < quarantined 3 < rejected 4 < violation 5.
  return verdicts.reduce<ExitCode>((a, b) => (b > a ? b : a), EXIT.ok);
}

export const EXIT_CODES_HELP = `
Exit codes:
  0  published, or the policy is satisfied
  1  usage error, authentication failure, service unreachable or unexpected answer;
     "health": the service is degraded
  2  held for review (pending_review, upgrade_required)
  3  quarantined
  4  rejected
  5  policy violation found by "vulns --fail-on"; "audit verify" found the chain broken`;
