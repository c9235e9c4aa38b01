/**
 * Security views and review actions (API.md "Security", DECISIONS §5): vulnerabilities, posture,
 * packages with findings, one version's CVEs, the review queue, decide (and its `/decision`
 * alias), rescan and quarantine. Policy, antivirus and feed sync are in security-admin.ts.
 */
import { Type } from 'typebox';
import type { AppContext } from '../../services/context.js';
import { actorOf } from '../auth-hook.js';
import { HttpError } from '../errors.js';
import { AnyObject, ErrorBody, errorResponses, Page, PageQuery, pageOf } from '../schemas.js';
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

/** Decide body: the union of both forms and the review guide (DECISIONS §5); values are checked by the state machine. */
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

/** Body fields win over the query string (clients put `arch` in either). */
function selectorOf(query: { arch?: string; distribution?: string }, body: { arch?: string; distribution?: string } | null | undefined) {
  return { arch: body?.arch ?? query.arch ?? null, distribution: body?.distribution ?? query.distribution ?? null };
}

export async function securityRoutes(app: App, ctx: AppContext): Promise<void> {
  const security = ctx.security;

  app.get('/security/vulnerabilities', {
    schema: {
      tags: ['security'],
      summary: 'CVEs across all stored packages, worst first (severity, KEV, EPSS, CVSS), each with the packages it affects',
      querystring: Type.Object({ ...PageQuery, severity: Type.Optional(Severity), distribution: Type.Optional(Codename), q: Type.Optional(Type.String({ maxLength: 100 })), kev: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { ...responses, 200: Page(AnyObject) },
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
      response: { ...responses, 200: AnyObject },
    },
  }, async () => security.queries.posture());

  app.get('/security/packages', {
    schema: {
      tags: ['security'],
      summary: 'Packages with findings (or in a held status), filtered by status and severity, worst first',
      querystring: Type.Object({ ...PageQuery, status: Type.Optional(PackageStatus), severity: Type.Optional(Severity), distribution: Type.Optional(Codename), q: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
      response: { ...responses, 200: Page(AnyObject) },
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
      response: { ...responses, 200: AnyObject },
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
      response: { ...responses, 200: Page(AnyObject) },
    },
  }, async (request) => {
    const { page = 1, per_page = 100, ...filter } = request.query;
    const result = await security.queries.reviewQueue(filter, { page, perPage: per_page });
    return pageOf(result.items, result.total, page, per_page);
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
        response: { ...responses, 200: AnyObject },
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
      response: { ...responses, 200: AnyObject },
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
      response: { ...responses, 200: AnyObject },
    },
  }, async (request) => {
    const body = request.body;
    const reason = body?.reason ?? body?.justification ?? null;
    return security.decisions.quarantine(request.params.name, request.params.version, selectorOf(request.query, body), reason, actorOf(request));
  });
}
