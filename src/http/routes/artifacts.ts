import { Type } from 'typebox';
import type { PackageRow } from '../../adapters/db/packages.table.js';
import { findDistribution, PACKAGE_STATUSES } from '../../domain/distributions.js';
import type { AppContext } from '../../services/context.js';
import { handlerFor } from '../../services/formats/index.js';
import { Catalog, latestRow, stepsOf, versionView } from '../../services/packages/catalog.js';
import { inspectedFromRow, type SyncReport } from '../../services/packages/lifecycle.js';
import { installableRow, installInstructions } from '../../services/packages/install.js';
import { providesLookup } from '../../services/packages/provides.js';
import { parseStoredFindings } from '../../services/security/findings-store.js';
import { actorOf, principalOf } from '../auth-hook.js';
import { notFound } from '../errors.js';
import { keptAnswers } from '../kept-answers.js';
import { PackageFormatOut, PackageListItemOut, PackageVersionOut, StoredStepOut } from '../package-schemas.js';
import { answering, errorResponses, Nullable, Page, PageQuery, pageOf, StringEnum } from '../schemas.js';
import { CveStatusOut, PackageStatusOut, StoredFindingOut } from '../security-schemas.js';
import type { App } from '../types.js';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Version = Type.String({ minLength: 1, maxLength: 200 });
const Narrow = Type.Object({
  distribution: Type.Optional(Type.String({ maxLength: 50 })),
  arch: Type.Optional(Type.String({ maxLength: 50 })),
}, { additionalProperties: false });

const ArtifactSummaryOut = answering<Awaited<ReturnType<Catalog['artifacts']>>['items'][number]>()(Type.Object({
  name: Type.String(),
  format: PackageFormatOut,
  latest_version: Type.String(),
  distributions: Type.Array(Type.String()),
  /** The most held status among the versions (quarantined first), else the latest version's. */
  security_status: Type.String(),
  versions: Type.Array(Type.Object({
    version: Type.String(), arch: Type.String(), distribution: Type.String(), status: PackageStatusOut, cve_status: CveStatusOut, uploaded_at: Nullable(Type.String()),
  })),
}));

const ArtifactOut = Type.Object({
  name: Type.String(),
  format: PackageFormatOut,
  latest_version: Type.String(),
  versions: Type.Array(PackageVersionOut),
  last_validation: Type.Object({ version: Type.String(), distribution: Type.String(), status: PackageStatusOut, steps: Type.Array(StoredStepOut) }),
  /** Every version's findings, each naming the version and distribution it was found in. */
  cve_findings: Type.Array(Type.Object({ version: Type.String(), distribution: Type.String(), ...StoredFindingOut.properties })),
});

const versionDetailFields = { ...PackageVersionOut.properties, steps: Type.Array(StoredStepOut), cve_results: Type.Array(StoredFindingOut) };
const VersionOut = Type.Object({ ...versionDetailFields, items: Type.Array(Type.Object(versionDetailFields)) });

const installFields = { format: Type.String(), distribution: Type.String(), key_url: Type.String(), commands: Type.Array(Type.String()) };
/** APT (`format: deb`) gets a sources line signed by the key, dnf (`rpm`) a .repo file; both the commands to paste. */
const InstallOut = answering<ReturnType<typeof installInstructions>>()(Type.Union([
  Type.Object({ ...installFields, source_line: Type.String(), auth_conf: Type.Optional(Type.String({ description: "Private distributions: the apt auth.conf.d entry; the commands fill in $TOLLGATE_TOKEN" })) }),
  Type.Object({ ...installFields, repo_file: Type.String() }),
]));

const SyncReportOut = answering<SyncReport>()(Type.Object({
  distributions: Type.Array(Type.String()),
  packages_indexed: Type.Integer(),
  missing_files: Type.Array(Type.Object({ distribution: Type.String(), package: Type.String(), version: Type.String(), arch: Type.String(), sha256: Type.String() })),
  /** Files in the published tree no package refers to (reported, not deleted). */
  unreferenced_files: Type.Array(Type.String()),
  /** Published files that were missing from the tree and linked again. */
  relinked: Type.Integer(),
}));

export async function artifactRoutes(app: App, ctx: AppContext): Promise<void> {
  const catalog = new Catalog(ctx.db);
  const sendArtifacts = keptAnswers();
  const sendArtifact = keptAnswers();
  const sendPackages = keptAnswers();
  const lifecycle = ctx.repo.lifecycle;

  const rowsOr404 = async (name: string, filter: { version?: string; distribution?: string; arch?: string } = {}) => {
    const rows = await lifecycle.rows(name, filter);
    if (rows.length === 0) throw notFound(`Package ${name}${filter.version ? ` ${filter.version}` : ''}`, 'package_not_found');
    return rows;
  };

  app.get('/artifacts', {
    schema: {
      tags: ['artifacts'],
      summary: 'Every package name with its version history and security status',
      querystring: Type.Object({ ...PageQuery, distribution: Type.Optional(Type.String({ maxLength: 50 })) }, { additionalProperties: false }),
      response: { ...errorResponses, 200: Page(ArtifactSummaryOut) },
    },
  }, async (request, reply) => {
    const { page = 1, per_page = 100, distribution } = request.query;
    const kept = await catalog.artifacts({ page, perPage: per_page }, distribution);
    return sendArtifacts(reply, kept, () => pageOf(kept.items, kept.total, page, per_page));
  });

  app.get('/artifacts/:name', {
    schema: { tags: ['artifacts'], summary: 'All versions, the last validation results and CVE findings', params: Type.Object({ name: Name }), response: { ...errorResponses, 200: ArtifactOut } },
  }, async (request, reply) => {
    const kept = await catalog.artifact(request.params.name);
    if (!kept) throw notFound(`Package ${request.params.name}`, 'package_not_found');
    return sendArtifact(reply, kept, () => kept);
  });

  app.get('/artifacts/:name/dependencies', {
    schema: {
      tags: ['artifacts'],
      summary: 'Dependency check of the latest (or given) version against what its distribution publishes',
      params: Type.Object({ name: Name }),
      querystring: Type.Object({ version: Type.Optional(Version), distribution: Type.Optional(Type.String({ maxLength: 50 })) }, { additionalProperties: false }),
      response: {
        ...errorResponses,
        200: Type.Object({
          name: Type.String(), version: Type.String(), distribution: Type.String(),
          all_satisfied: Type.Boolean(), install_blocked: Type.Boolean(),
          missing: Type.Array(Type.Object({ relation: Type.String(), reason: Type.String() })),
        }),
      },
    },
  }, async (request) => {
    const rows = await rowsOr404(request.params.name, request.query);
    const row = latestRow(rows);
    const dist = findDistribution(row.distribution)!;
    const report = await handlerFor(dist.format).checkDependencies(inspectedFromRow(row), providesLookup(ctx.db, dist.codename), dist);
    return { name: row.name, version: row.version, distribution: row.distribution, ...report };
  });

  app.get('/artifacts/:name/install', {
    schema: {
      tags: ['artifacts'],
      summary: 'Client set-up and install commands for the package',
      params: Type.Object({ name: Name }),
      querystring: Type.Object({ distribution: Type.Optional(Type.String({ maxLength: 50 })), version: Type.Optional(Version) }, { additionalProperties: false }),
      response: { ...errorResponses, 200: InstallOut },
    },
  }, async (request) => {
    const rows = await rowsOr404(request.params.name, request.query);
    const row = installableRow(rows, request.query.version);
    const base = (await ctx.settings.get('app_url')) ?? ctx.config.appUrl;
    return installInstructions(base, findDistribution(row.distribution)!, row, principalOf(request).user.username);
  });

  app.get('/artifacts/:name/:version', {
    schema: { tags: ['artifacts'], summary: "One version's information", params: Type.Object({ name: Name, version: Version }), querystring: Narrow, response: { ...errorResponses, 200: VersionOut } },
  }, async (request) => {
    const rows = await rowsOr404(request.params.name, { version: request.params.version, ...request.query });
    const detail = (r: PackageRow) => ({ ...versionView(r), steps: stepsOf(r), cve_results: parseStoredFindings(r.findings).details });
    // The version's own fields at the top (the narrowed row, else the one changed last); every distribution and arch in `items`.
    const shown = rows.reduce((a, b) => (b.updated_at > a.updated_at ? b : a));
    return { ...detail(shown), items: rows.map(detail) };
  });

  const deleteAnswer = Type.Object({ deleted: Type.Integer(), items: Type.Array(Type.Object({ version: Type.String(), arch: Type.String(), distribution: Type.String() })) });

  app.delete('/artifacts/:name', {
    schema: { tags: ['artifacts'], summary: 'Delete every version (optionally only in one distribution)', params: Type.Object({ name: Name }), querystring: Narrow, response: { ...errorResponses, 200: deleteAnswer } },
  }, async (request) => {
    const rows = await rowsOr404(request.params.name, request.query);
    await lifecycle.delete(rows, actorOf(request));
    return { deleted: rows.length, items: rows.map((r) => ({ version: r.version, arch: r.arch, distribution: r.distribution })) };
  });

  app.delete('/artifacts/:name/:version', {
    schema: { tags: ['artifacts'], summary: 'Delete one version (optionally one distribution or arch)', params: Type.Object({ name: Name, version: Version }), querystring: Narrow, response: { ...errorResponses, 200: deleteAnswer } },
  }, async (request) => {
    const rows = await rowsOr404(request.params.name, { version: request.params.version, ...request.query });
    await lifecycle.delete(rows, actorOf(request));
    return { deleted: rows.length, items: rows.map((r) => ({ version: r.version, arch: r.arch, distribution: r.distribution })) };
  });

  app.post('/artifacts/admin/sync-index', {
    schema: { tags: ['artifacts'], summary: 'Rebuild every index from the database; report missing and unreferenced files', response: { ...errorResponses, 200: SyncReportOut } },
  }, async (request) => {
    return lifecycle.syncIndex(actorOf(request));
  });

  app.get('/packages', {
    schema: {
      tags: ['packages'],
      summary: 'Packages in raw pool format (filter by name text, distribution and status)',
      querystring: Type.Object({
        ...PageQuery,
        q: Type.Optional(Type.String({ maxLength: 200 })),
        distribution: Type.Optional(Type.String({ maxLength: 50 })),
        // Filtered in the query so that `total` and `pages` count the matching versions only.
        status: Type.Optional(StringEnum(PACKAGE_STATUSES)),
      }, { additionalProperties: false }),
      response: { ...errorResponses, 200: Page(PackageListItemOut) },
    },
  }, async (request, reply) => {
    const { page = 1, per_page = 100, q, distribution, status } = request.query;
    const kept = await catalog.packages({ q, distribution, status }, { page, perPage: per_page });
    return sendPackages(reply, kept, () => pageOf(kept.items, kept.total, page, per_page));
  });
}
