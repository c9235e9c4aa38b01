/**
 * Who may read what under /repo/. Public distributions are read by anyone, as apt and dnf
 * expect; a private one's files answer only to a request that authenticates (HTTP Basic whose
 * password is an API token, as apt's auth.conf and dnf's username/password send it, or a
 * Bearer token). Pool files are shared between APT distributions: one stays public while any
 * public distribution publishes it.
 */
import type { Db } from '../adapters/db/index.js';
import { distributionsPublishing } from '../adapters/db/distributions.table.js';
import { allDistributions, findDistribution } from '../domain/distributions.js';

/** How long a pool file's publishing distributions are remembered (a download burst reads it once). */
const POOL_CACHE_MS = 5_000;
const POOL_CACHE_SIZE = 10_000;

export class RepositoryAccess {
  private readonly poolCache = new Map<string, { guarded: string[] | null; at: number }>();

  constructor(private readonly db: Db) {}

  /** The private distributions guarding a repository path, or null when anyone may read it. */
  async guardsOf(path: string): Promise<string[] | null> {
    if (!allDistributions().some((d) => d.private)) return null;
    const [root, second, third] = path.split('/');
    if (root === 'apt' && second === 'dists' && third) return privateOnly([third]);
    if (root === 'rpm' && second) return privateOnly([second]);
    if (root === 'apt' && second === 'pool') return this.poolGuards(path);
    return null;
  }

  private async poolGuards(path: string): Promise<string[] | null> {
    const now = Date.now();
    const cached = this.poolCache.get(path);
    if (cached && now - cached.at < POOL_CACHE_MS) return cached.guarded;
    const codenames = await distributionsPublishing(this.db, path);
    const active = codenames.map((c) => findDistribution(c)).filter((d) => d !== undefined);
    const guarded = active.length > 0 && active.every((d) => d.private) ? active.map((d) => d.codename) : null;
    if (this.poolCache.size >= POOL_CACHE_SIZE) this.poolCache.clear();
    this.poolCache.set(path, { guarded, at: now });
    return guarded;
  }
}

function privateOnly(codenames: string[]): string[] | null {
  const guarded = codenames.filter((c) => findDistribution(c)?.private);
  return guarded.length > 0 ? guarded : null;
}
