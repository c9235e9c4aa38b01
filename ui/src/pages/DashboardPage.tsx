import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api } from '../api';
import { ErrorNotice, KevBadge, label, Loading, percent, SeverityBadge, StatusBadge, when } from '../components/bits';
import { DayBars } from '../components/DayBars';
import { can } from '../permissions';
import { useSession } from '../session';
import { SEVERITIES, type AuditEntry, type Page, type QueueItem, type Severity } from '../types';

interface Summary {
  packages_total: number;
  pending_reviews: number;
  findings: Record<Severity, number>;
  findings_total: number;
  recent_activity: AuditEntry[];
}
interface History {
  history: Array<{ day: string; uploads: number; publications: number }>;
}
interface HealthComponent {
  ok: boolean;
  configured: boolean;
  detail?: string;
  [field: string]: unknown;
}
interface Health {
  status: string;
  version: string;
  components?: Record<string, HealthComponent>;
}

const COMPONENT_NAMES: Record<string, string> = {
  database: 'Database', clamav: 'Antivirus (clamd)', grype: 'Vulnerability database', gpg: 'Signing key', redis: 'Redis (shared rate limits)',
};

/** What a component reports beyond its state (version, key count, latency…), as `name value` pairs. */
const reported = (c: HealthComponent) =>
  Object.entries(c)
    .filter(([k, v]) => !['ok', 'configured', 'detail'].includes(k) && v !== null && typeof v !== 'object')
    .map(([k, v]) => `${label(k)} ${String(v)}`)
    .join(', ');

/** GET /health, component by component: what a platform team checks first when uploads stall. */
function ServiceHealth() {
  const health = useQuery({ queryKey: ['health'], queryFn: () => api<Health>('GET', '/health'), refetchInterval: 30_000 });
  if (health.isPending) return <Loading what="the service's health" />;
  if (health.error) return <ErrorNotice error={health.error} />;
  const h = health.data;
  return (
    <>
      <p><StatusBadge status={h.status} /> Tollgate {h.version}</p>
      <table>
        <thead><tr><th scope="col">Component</th><th scope="col">State</th><th scope="col">Detail</th></tr></thead>
        <tbody>
          {Object.entries(h.components ?? {}).map(([name, c]) => (
            <tr key={name}>
              <td>{COMPONENT_NAMES[name] ?? name}</td>
              <td><StatusBadge status={!c.configured ? 'not_configured' : c.ok ? 'ok' : 'failing'} /></td>
              <td>{[c.detail, reported(c)].filter(Boolean).join('; ') || '–'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}


/** The riskiest packages awaiting review (KEV, then EPSS, then CVSS), for roles that see the queue. */
function PendingReviews() {
  const queue = useQuery({ queryKey: ['review-queue', 'top'], queryFn: () => api<Page<QueueItem>>('GET', '/security/review-queue?sort=risk&per_page=5') });
  if (queue.isPending) return <Loading what="pending reviews" />;
  if (queue.error) return <ErrorNotice error={queue.error} />;
  if (queue.data.items.length === 0) return <p className="muted">Nothing awaits review.</p>;
  return (
    <table>
      <thead><tr><th scope="col">Package</th><th scope="col">Worst</th><th scope="col">KEV</th><th scope="col" className="num">EPSS</th><th scope="col">SLA</th></tr></thead>
      <tbody>
        {queue.data.items.map((i) => (
          <tr key={`${i.name}/${i.version}/${i.arch}/${i.distribution}`}>
            <td><Link to={`/packages/${encodeURIComponent(i.name)}`}>{i.name}</Link> {i.version} <span className="muted">{i.distribution}</span></td>
            <td><SeverityBadge severity={i.worst_severity} /></td><td><KevBadge inKev={i.in_kev} /></td><td className="num">{percent(i.epss)}</td>
            <td>{i.sla_remaining_days === null ? '–' : i.overdue ? 'overdue' : `${i.sla_remaining_days} d`}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function DashboardPage() {
  const { session } = useSession();
  const summary = useQuery({ queryKey: ['dashboard', 'summary'], queryFn: () => api<Summary>('GET', '/dashboard/summary'), refetchInterval: 30_000 });
  const history = useQuery({ queryKey: ['dashboard', 'history'], queryFn: () => api<History>('GET', '/dashboard/history?days=30') });
  if (summary.isPending) return <Loading what="the dashboard" />;
  if (summary.error) return <ErrorNotice error={summary.error} />;
  const s = summary.data;
  return (
    <>
      <h1>Dashboard</h1>
      <section className="cards" aria-label="Counts">
        <div className="card"><span className="number">{s.packages_total}</span><span>packages</span></div>
        <div className="card"><span className="number">{s.pending_reviews}</span><span><Link to="/review">pending reviews</Link></span></div>
        <div className="card"><span className="number">{s.findings_total}</span><span>CVE findings</span></div>
      </section>
      <div className="columns">
        <section aria-labelledby="by-severity">
          <h2 id="by-severity">Findings by severity</h2>
          <table>
            <thead><tr><th scope="col">Severity</th><th scope="col" className="num">Findings</th></tr></thead>
            <tbody>
              {SEVERITIES.map((sev) => (
                <tr key={sev}><td><span className={`badge sev-${sev}`}>{sev}</span></td><td className="num">{s.findings[sev]}</td></tr>
              ))}
            </tbody>
          </table>
        </section>
        <section aria-labelledby="uploads">
          <h2 id="uploads">Uploads</h2>
          {history.data ? <DayBars days={history.data.history.map((d) => ({ day: d.day, count: d.uploads }))} what="Uploads" caption={`${history.data.history.reduce((sum, d) => sum + d.uploads, 0)} in all`} /> : <ErrorNotice error={history.error} />}
        </section>
      </div>
      {can(session, 'review_queue') && s.pending_reviews > 0 && (
        <section aria-labelledby="pending">
          <h2 id="pending">Pending reviews</h2>
          <PendingReviews />
        </section>
      )}
      <section aria-labelledby="health">
        <h2 id="health">Service health</h2>
        <ServiceHealth />
      </section>
      <section aria-labelledby="activity">
        <h2 id="activity">Recent activity</h2>
        <table>
          <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">User</th><th scope="col">Package</th><th scope="col">Result</th></tr></thead>
          <tbody>
            {s.recent_activity.map((e) => (
              <tr key={e.seq}>
                <td>{when(e.timestamp)}</td>
                <td>{label(e.action)}</td>
                <td>{e.user ?? '–'}</td>
                <td>{e.package ? <Link to={`/packages/${encodeURIComponent(e.package)}`}>{e.package} {e.version}</Link> : '–'}</td>
                <td><StatusBadge status={e.result} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}
