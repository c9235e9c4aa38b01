import type { App } from '../types.js';
import type { AppContext } from '../../services/context.js';
import { apiTokenRoutes } from './api-tokens.js';
import { auditRoutes } from './audit.js';
import { authRoutes } from './auth.js';
import { healthRoutes } from './health.js';
import { settingsRoutes } from './settings.js';
import { userRoutes } from './users.js';

/** Every resource's routes; registered once per API prefix ('', /api, /api/v1). */
export async function apiRoutes(app: App, ctx: AppContext): Promise<void> {
  await authRoutes(app, ctx);
  await userRoutes(app, ctx);
  await apiTokenRoutes(app, ctx);
  await auditRoutes(app, ctx);
  await settingsRoutes(app, ctx);
  await healthRoutes(app, ctx);
}
