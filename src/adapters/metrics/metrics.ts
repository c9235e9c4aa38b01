import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Numbers the gauges read at scrape time; each capability fills in what it owns. */
export interface GaugeSources {
  packagesTotal?: () => Promise<number>;
  payloadsPending?: () => Promise<number>;
  pendingReviewTotal?: () => Promise<number>;
  quarantineTotal?: () => Promise<number>;
  clamavLastUpdate?: () => Promise<number | null>;
  vulnDbAgeSeconds?: () => Promise<number | null>;
}

/** The Prometheus registry and every series the service exposes (the service's own prefixed `tollgate_`). */
export class Metrics {
  readonly registry = new Registry();
  readonly sources: GaugeSources = {};

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'path', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method and route template',
    labelNames: ['method', 'path'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly uploads = new Counter({
    name: 'tollgate_uploads_total',
    help: 'Uploads by resulting status',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly cveFindings = new Counter({
    name: 'tollgate_cve_findings_total',
    help: 'CVE findings by severity, counted when a scan reports them',
    labelNames: ['severity'] as const,
    registers: [this.registry],
  });

  readonly notificationFailures = new Counter({
    name: 'tollgate_notification_failures_total',
    help: 'Webhook and e-mail notifications that could not be delivered',
    labelNames: ['channel'] as const,
    registers: [this.registry],
  });

  readonly publishDuration = new Histogram({
    name: 'tollgate_publish_duration_seconds',
    help: 'Time to regenerate and sign one distribution index (mode: append or full)',
    labelNames: ['format', 'mode'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const gauge = (name: string, help: string, read: () => Promise<number | null> | undefined) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const value = await read();
          if (value !== null && value !== undefined) this.set(value);
        },
      });
    gauge('tollgate_packages_total', 'Packages stored, all distributions and states', () => this.sources.packagesTotal?.());
    gauge('tollgate_pending_review_total', 'Packages waiting for a security decision', () => this.sources.pendingReviewTotal?.());
    gauge('tollgate_quarantine_total', 'Packages in quarantine', () => this.sources.quarantineTotal?.());
    gauge('tollgate_deb_payloads_pending', 'Packages whose payload (file list for Contents) is still to be read', () => this.sources.payloadsPending?.());
    gauge('tollgate_clamav_last_update', 'Unix time of the last antivirus signature update', () => this.sources.clamavLastUpdate?.());
    gauge('tollgate_grype_db_age_seconds', 'Age of the vulnerability database', () => this.sources.vulnDbAgeSeconds?.());
  }
}
