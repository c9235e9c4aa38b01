import type { AppContext } from '../services/context.js';
import { HttpError } from './errors.js';

/** DECISIONS §10: Enterprise features answer 402 on the Community edition. */
export function requireEnterprise(ctx: AppContext, feature: string): void {
  if (ctx.config.edition === 'enterprise') return;
  throw new HttpError(402, 'enterprise_required', `${feature} is available in the Enterprise edition`, {
    feature,
    edition: 'community',
    upgrade_url: 'https://tollgate.example/enterprise',
  });
}
