import type { App } from '../types.js';
import type { AppContext } from '../../services/context.js';
import { apiTokenRoutes } from './api-tokens.js';
import { artifactRoutes } from './artifacts.js';
import { auditRoutes } from './audit.js';
import { authRoutes } from './auth.js';
import { dashboardRoutes } from './dashboard.js';
import { distributionRoutes } from './distributions.js';
import { downloadRoutes } from './downloads.js';
import { gpgRoutes } from './gpg.js';
import { healthRoutes } from './health.js';
import { importCatalogRoutes } from './import-catalog.js';
import { importFetchRoutes } from './import-fetch.js';
import { importSourceRoutes } from './import-sources.js';
import { securityRoutes } from './security.js';
import { securityAdminRoutes } from './security-admin.js';
import { sbomRoutes } from './sbom.js';
import { sessionRoutes } from './session.js';
import { settingsRoutes } from './settings.js';
import { settingsActionRoutes } from './settings-actions.js';
import { uploadRoutes } from './upload.js';
import { userRoutes } from './users.js';

/** Every resource's routes; registered once per API prefix ('', /api, /api/v1). */
export async function apiRoutes(app: App, ctx: AppContext): Promise<void> {
  await authRoutes(app, ctx);
  await sessionRoutes(app, ctx);
  await userRoutes(app, ctx);
  await apiTokenRoutes(app, ctx);
  await auditRoutes(app, ctx);
  await settingsRoutes(app, ctx);
  await settingsActionRoutes(app, ctx);
  await healthRoutes(app, ctx);
  await uploadRoutes(app, ctx);
  await artifactRoutes(app, ctx);
  await distributionRoutes(app, ctx);
  await gpgRoutes(app, ctx);
  await securityRoutes(app, ctx);
  await securityAdminRoutes(app, ctx);
  await dashboardRoutes(app, ctx);
  await downloadRoutes(app, ctx);
  await sbomRoutes(app, ctx);
  await importSourceRoutes(app, ctx);
  await importCatalogRoutes(app, ctx);
  await importFetchRoutes(app, ctx);
}
