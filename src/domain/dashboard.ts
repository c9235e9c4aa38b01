/**
 * What the dashboard's history counts, as audit entries (the actions and detail texts the
 * services write). Declared as data so the service turns each series into one
 * SQL aggregate; an entry may count in several series (a `reject` decision is a review and a
 * quarantine).
 */

export interface AuditMatch {
  actions: readonly string[];
  result?: string;
  /** SQL LIKE patterns over `detail`; any one matches. */
  detailLike?: readonly string[];
}

const UPLOADS = ['UPLOAD', 'IMPORT'] as const;

export const HISTORY_SERIES = {
  /** Every upload or import attempt, whatever its outcome. */
  uploads: [{ actions: UPLOADS }],
  /** A package entering an index: an upload published at once, or an accepting review decision. */
  publications: [
    { actions: UPLOADS, result: 'SUCCESS' },
    { actions: ['SECURITY_DECISION'], result: 'SUCCESS', detailLike: ['action=accept_risk;%', 'action=exception;%'] },
  ],
  /** Review decisions taken by a person (expiries are written as WARNING by the scheduler). */
  reviews: [{ actions: ['SECURITY_DECISION'], result: 'SUCCESS' }],
  /** Explicit quarantines, uploads quarantined by the pipeline, and `reject` decisions. */
  quarantines: [
    { actions: ['QUARANTINE'] },
    { actions: UPLOADS, detailLike: ['%; status=quarantined;%'] },
    { actions: ['SECURITY_DECISION'], result: 'SUCCESS', detailLike: ['action=reject;%'] },
  ],
} as const satisfies Record<string, readonly AuditMatch[]>;

export type HistorySeries = keyof typeof HISTORY_SERIES;
export const HISTORY_SERIES_NAMES = Object.keys(HISTORY_SERIES) as HistorySeries[];

/** Every action any series reads: the history query's index range. */
export const HISTORY_ACTIONS = [...new Set(Object.values(HISTORY_SERIES).flatMap((matches) => matches.flatMap((m) => [...m.actions])))];

export const HISTORY_DEFAULT_DAYS = 30;
export const HISTORY_MAX_DAYS = 365;
/** How many audit entries the summary lists as recent activity. */
export const RECENT_ACTIVITY = 20;
