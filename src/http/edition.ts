import type { AppContext } from '../services/context.js';
import { HttpError } from './errors.js';

/** Enterprise features answer 402 on the Community edition, naming the feature and where to upgrade. */
export function requireEnterprise(ctx: AppContext, feature: string): void {
  if (ctx.config.edition === 'enterprise') return;
  throw new HttpError(402, 'enterprise_required', `${feature} is available in the Enterprise edition`, {
    feature,
    edition: 'community',
    upgrade_url: 'https://tollgate.example/enterprise',
  });
}
