/**
 * Security views and review actions: vulnerabilities, posture, packages with findings, one
 * version's CVEs, the review queue, decide (and its `/decision` alias), rescan and quarantine.
 * Policy, antivirus and feed sync are in security-admin.ts.
 */
import { Type } from 'typebox';
import type { AppContext } from '../../services/context.js';
import type { DecideAnswer, QuarantineAnswer } from '../../services/security/decisions.js';
import type { SecurityQueries } from '../../services/security/queries.js';
import type { RescanAnswer } from '../../services/security/rescan.js';
import { actorOf } from '../auth-hook.js';
import { HttpError } from '../errors.js';
import { keptAnswers } from '../kept-answers.js';
import { answering, ErrorBody, errorResponses, Nullable, Page, PageQuery, pageOf, SeverityCounts } from '../schemas.js';
import {
  DecisionOut, FindingViewOut, PackageSecurityOut, packageSecurityFields, PackageStatusOut, SeverityOut, StatusChangeOut, StoredFindingOut,
} from '../security-schemas.js';
import type { App } from '../types.js';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Version = Type.String({ minLength: 1, maxLength: 200 });
const Codename = Type.String({ minLength: 1, maxLength: 50 });
const Arch = Type.String({ minLength: 1, maxLength: 50 });
const Severity = Type.Union([Type.Literal('critical'), Type.Literal('high'), Type.Literal('medium'), Type.Literal('low'), Type.Literal('negligible')]);
const PackageStatus = Type.Union(
  ['published', 'pending_review', 'accepted_risk', 'exception', 'upgrade_required', 'quarantined'].map((s) => Type.Literal(s)),
);
const Params = Type.Object({ name: Name, version: Version });
const Selector = Type.Object({ arch: Type.Optional(Arch), distribution: Type.Optional(Codename) }, { additionalProperties: false });

/** Decide body: the fields of both API forms and of the review guide; values are checked by the state machine. */
const DecideBody = Type.Object(
  {
    action: Type.Optional(Type.String({ maxLength: 50 })),
    decision: Type.Optional(Type.String({ maxLength: 50 })),
    justification: Type.Optional(Type.String({ maxLength: 20000 })),
    comment: Type.Optional(Type.String({ maxLength: 20000 })),
    expires_in_days: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 20 }), Type.Null()])),
    expires_days: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 20 }), Type.Null()])),
    expiry_days: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 20 }), Type.Null()])),
    expiry: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 20 }), Type.Null()])),
    target_version: Type.Optional(Type.String({ maxLength: 200 })),
    cve_ids: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 100 }), { maxItems: 1000 }), Type.String({ maxLength: 100000 })])),
    arch: Type.Optional(Arch),
    distribution: Type.Optional(Codename),
  },
  { additionalProperties: false },
);

const QuarantineBody = Type.Union([
  Type.Object({ reason: Type.Optional(Type.String({ maxLength: 2000 })), justification: Type.Optional(Type.String({ maxLength: 2000 })), arch: Type.Optional(Arch), distribution: Type.Optional(Codename) }, { additionalProperties: false }),
  Type.Null(),
]);

const RescanBody = Type.Union([Type.Object({ arch: Type.Optional(Arch), distribution: Type.Optional(Codename) }, { additionalProperties: false }), Type.Null()]);

const responses = { ...errorResponses, 424: ErrorBody };

type Answer<M extends keyof SecurityQueries> = Awaited<ReturnType<SecurityQueries[M]>>;

const VulnerabilityOut = answering<Answer<'vulnerabilities'>['items'][number]>()(Type.Object({
  cve_id: Type.String(),
  /** The worst severity, EPSS, CVSS and KEV flag among the packages' findings of the CVE. */
  severity: Nullable(SeverityOut),
  cvss_score: Nullable(Type.Number()),
  cvss_vector: Nullable(Type.String()),
  epss: Nullable(Type.Number()),
  epss_percentile: Nullable(Type.Number()),
  in_kev: Nullable(Type.Boolean()),
  summary: Type.String(),
  advisory_ids: Type.Array(Type.String()),
  package_count: Type.Integer(),
  packages: Type.Array(Type.Object({
    name: Type.String(), version: Type.String(), arch: Type.String(), distribution: Type.String(), status: PackageStatusOut,
    affected_component: Type.String(), fix_state: Type.String(), fixed_version: Nullable(Type.String()),
  })),
}));

const PostureOut = answering<Answer<'posture'>>()(Type.Object({
  packages_total: Type.Integer(),
  by_status: Type.Record(Type.String(), Type.Integer()),
  packages_by_worst_severity: SeverityCounts,
  findings_by_severity: SeverityCounts,
  /** Distinct CVEs per severity (one CVE found in several packages counts once). */
  cves_by_severity: SeverityCounts,
  kev: Type.Object({ findings: Type.Integer(), packages: Type.Integer() }),
  review: Type.Object({ pending: Type.Integer(), overdue: Type.Integer(), due_within_7_days: Type.Integer() }),
  vulnerability_database: Type.Object({ configured: Type.Boolean(), advisories: Type.Integer(), synced_at: Nullable(Type.String()), age_hours: Nullable(Type.Number()) }),
}));

const PackageCvesOut = answering<Answer<'packageCves'>>()(Type.Object({
  name: Type.String(),
  package: Type.String(),
  version: Type.String(),
  /** Each distribution and arch holding the version, with its findings and decision record. */
  packages: Type.Array(Type.Object({ ...packageSecurityFields, findings: Type.Array(FindingViewOut), decision: Nullable(DecisionOut) })),
  /** The findings of all of them, one per CVE; `cve_results` is the same list under its other API name. */
  findings: Type.Array(FindingViewOut),
  cve_results: Type.Array(FindingViewOut),
  total: Type.Integer(),
}));

const ReviewEntryOut = answering<Answer<'reviewQueue'>['items'][number]>()(Type.Object({
  ...packageSecurityFields,
  overdue: Type.Boolean(),
  /** The findings whose policy holds the package, else the package's recorded reasons. */
  held_because: Type.Array(Type.String()),
  findings: Type.Array(FindingViewOut),
  /** For upgrade_required only: the decision that asked for the upgrade. */
  decision: Nullable(DecisionOut),
}));

const DecideOut = answering<DecideAnswer>()(Type.Object({
  name: Type.String(),
  package: Type.String(),
  version: Type.String(),
  arch: Type.String(),
  action: Type.String(),
  status: Type.String(),
  previous_status: Type.String(),
  /** Whether the package is in the signed index after the decision. */
  in_index: Type.Boolean(),
  sla_deadline: Nullable(Type.String()),
  distributions: Type.Array(StatusChangeOut),
  decision: DecisionOut,
}));

const RescanOut = answering<RescanAnswer>()(Type.Object({
  name: Type.String(),
  package: Type.String(),
  version: Type.String(),
  arch: Type.String(),
  status: Type.String(),
  distributions: Type.Array(Type.Object({
    distribution: Type.String(),
    previous_status: Type.String(),
    status: Type.String(),
    cve_status: Type.String(),
    changed: Type.Boolean(),
    /** Why the status changed, when the rescan changed it. */
    reason: Nullable(Type.String()),
    counts: Type.Record(Type.String(), Type.Integer()),
    findings: Type.Array(StoredFindingOut),
  })),
}));

const QuarantineOut = answering<QuarantineAnswer>()(Type.Object({
  name: Type.String(),
  package: Type.String(),
  version: Type.String(),
  arch: Type.String(),
  status: Type.Literal('quarantined'),
  /** False when every copy was already quarantined. */
  changed: Type.Boolean(),
  distributions: Type.Array(StatusChangeOut),
}));

/** Body fields win over the query string (clients put `arch` in either). */
function selectorOf(query: { arch?: string; distribution?: string }, body: { arch?: string; distribution?: string } | null | undefined) {
  return { arch: body?.arch ?? query.arch ?? null, distribution: body?.distribution ?? query.distribution ?? null };
}

export async function securityRoutes(app: App, ctx: AppContext): Promise<void> {
  const security = ctx.security;
  const sendReviewPage = keptAnswers();

  app.get('/security/vulnerabilities', {
    schema: {
      tags: ['security'],
      summary: 'CVEs across all stored packages, worst first (severity, KEV, EPSS, CVSS), each with the packages it affects',
      querystring: Type.Object({ ...PageQuery, severity: Type.Optional(Severity), distribution: Type.Optional(Codename), q: Type.Optional(Type.String({ maxLength: 100 })), kev: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { ...responses, 200: Page(VulnerabilityOut) },
    },
  }, async (request) => {
    const { page = 1, per_page = 100, ...filter } = request.query;
    const result = await security.queries.vulnerabilities(filter, { page, perPage: per_page });
    return pageOf(result.items, result.total, page, per_page);
  });

  app.get('/security/packages-posture', {
    schema: {
      tags: ['security'],
      summary: 'Security posture: packages by status and worst severity, findings by severity, KEV, review SLA, vulnerability database state',
      response: { ...responses, 200: PostureOut },
    },
  }, async () => security.queries.posture());

  app.get('/security/packages', {
    schema: {
      tags: ['security'],
      summary: 'Packages with findings (or in a held status), filtered by status and severity, worst first',
      querystring: Type.Object({ ...PageQuery, status: Type.Optional(PackageStatus), severity: Type.Optional(Severity), distribution: Type.Optional(Codename), q: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
      response: { ...responses, 200: Page(PackageSecurityOut) },
    },
  }, async (request) => {
    const { page = 1, per_page = 100, ...filter } = request.query;
    const result = await security.queries.packages(filter, { page, perPage: per_page });
    return pageOf(result.items, result.total, page, per_page);
  });

  app.get('/security/packages/:name/:version/cve', {
    schema: {
      tags: ['security'],
      summary: 'The CVE findings of one version (per distribution and arch), with SLA remaining days and the decision record',
      params: Params,
      querystring: Selector,
      response: { ...responses, 200: PackageCvesOut },
    },
  }, async (request) => security.queries.packageCves(request.params.name, request.params.version, selectorOf(request.query, null)));

  app.get('/security/review-queue', {
    schema: {
      tags: ['security'],
      summary: 'Packages awaiting a decision (pending_review, upgrade_required): KEV first, then EPSS, then CVSS; sort=sla orders by deadline then EPSS',
      querystring: Type.Object({
        ...PageQuery,
        sort: Type.Optional(Type.Union([Type.Literal('risk'), Type.Literal('sla')])),
        status: Type.Optional(Type.Union([Type.Literal('pending_review'), Type.Literal('upgrade_required'), Type.Literal('all')])),
        distribution: Type.Optional(Codename),
      }, { additionalProperties: false }),
      response: { ...responses, 200: Page(ReviewEntryOut) },
    },
  }, async (request, reply) => {
    const { page = 1, per_page = 100, ...filter } = request.query;
    const kept = await security.queries.reviewQueue(filter, { page, perPage: per_page });
    return sendReviewPage(reply, kept, () => pageOf(kept.items, kept.total, page, per_page));
  });

  for (const ending of ['decide', 'decision'] as const) {
    app.post(`/security/packages/:name/:version/${ending}`, {
      schema: {
        tags: ['security'],
        summary: ending === 'decide'
          ? 'Decide on a package in review: action (or decision) accept_risk|exception|upgrade_required|reject (aliases accepted, approve, accept, rejected), justification (or comment), expires_in_days, target_version, optional arch'
          : 'Alias of /decide (the review guide\'s path)',
        params: Params,
        querystring: Selector,
        body: Type.Union([DecideBody, Type.Null()]),
        response: { ...responses, 200: DecideOut },
      },
    }, async (request) => {
      const body = request.body ?? {};
      return security.decisions.decide(request.params.name, request.params.version, body, selectorOf(request.query, body), actorOf(request));
    });
  }

  app.post('/security/packages/:name/:version/rescan', {
    schema: {
      tags: ['security'],
      summary: 'Re-match the stored package against the current vulnerability data; a published package whose findings now need review or block leaves the index',
      params: Params,
      querystring: Selector,
      body: RescanBody,
      response: { ...responses, 200: RescanOut },
    },
  }, async (request) => {
    const answer = await security.rescans.rescan(request.params.name, request.params.version, selectorOf(request.query, request.body), actorOf(request));
    if (!answer) throw new HttpError(424, 'vulnerability_db_not_synced', 'No vulnerability database yet: configure vuln_feeds and run POST /import/sync-security');
    return answer;
  });

  app.post('/security/packages/:name/:version/quarantine', {
    schema: {
      tags: ['security'],
      summary: 'Quarantine a package version from any state: out of the index, file moved to the quarantine area (optional reason)',
      params: Params,
      querystring: Selector,
      body: QuarantineBody,
      response: { ...responses, 200: QuarantineOut },
    },
  }, async (request) => {
    const body = request.body;
    const reason = body?.reason ?? body?.justification ?? null;
    return security.decisions.quarantine(request.params.name, request.params.version, selectorOf(request.query, body), reason, actorOf(request));
  });
}
