/** One component of the health report. `ok` is never claimed for what is not configured. */
export interface ComponentStatus {
  ok: boolean;
  configured: boolean;
  detail?: string;
  [field: string]: unknown;
}

export type ComponentName = 'database' | 'clamav' | 'grype' | 'gpg' | 'redis';
export type ComponentCheck = () => Promise<ComponentStatus>;

const notConfigured = (detail: string): ComponentCheck => async () => ({ ok: false, configured: false, detail });

/**
 * Health of the service's parts. Capabilities register their check; readiness needs the
 * database and every configured critical dependency (the antivirus daemon when one is set).
 */
export class HealthService {
  private started = false;
  private readonly checks: Record<ComponentName, ComponentCheck> = {
    database: notConfigured('not checked yet'),
    clamav: notConfigured('antivirus not configured (CLAMAV_SOCKET or CLAMAV_HOST)'),
    grype: notConfigured('vulnerability database not synchronised yet'),
    gpg: notConfigured('signing key not created yet'),
    redis: notConfigured('REDIS_URL not set: rate limits are counted in each replica'),
  };
  private readonly critical = new Set<ComponentName>(['database']);

  register(name: ComponentName, check: ComponentCheck, critical = false): void {
    this.checks[name] = check;
    if (critical) this.critical.add(name);
  }

  markStarted(): void {
    this.started = true;
  }

  private async run(name: ComponentName): Promise<ComponentStatus> {
    try {
      return await this.checks[name]();
    } catch (error) {
      return { ok: false, configured: true, detail: (error as Error).message };
    }
  }

  async report(): Promise<Record<ComponentName, ComponentStatus>> {
    const names = Object.keys(this.checks) as ComponentName[];
    const results = await Promise.all(names.map((n) => this.run(n)));
    return Object.fromEntries(names.map((n, i) => [n, results[i]!])) as Record<ComponentName, ComponentStatus>;
  }

  /** Ready once started and no configured critical component fails; from a report if one was just made. */
  async readiness(report?: Record<ComponentName, ComponentStatus>): Promise<{ ready: boolean; failing: string[] }> {
    if (!this.started) return { ready: false, failing: ['startup'] };
    const failing: string[] = [];
    for (const name of this.critical) {
      const status = report?.[name] ?? (await this.run(name));
      if (status.configured && !status.ok) failing.push(name);
    }
    return { ready: failing.length === 0, failing };
  }

}
