import { useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, query } from '../api';
import { ErrorNotice, KevBadge, label, Loading, Pagination, percent, SeverityBadge, StatusBadge } from '../components/bits';
import { DecideDialog, type DecideTarget } from '../components/DecideDialog';
import { can } from '../permissions';
import { useSession } from '../session';
import type { Page, QueueItem } from '../types';
import { useDistributions } from './PackagesPage';

function SlaCountdown({ item }: { item: QueueItem }) {
  if (item.sla_remaining_days === null) return <span className="muted">no SLA</span>;
  if (item.overdue) return <span className="badge tone-bad">overdue by {Math.abs(item.sla_remaining_days)} d</span>;
  const tone = item.sla_remaining_days <= 7 ? 'tone-attention' : 'tone-neutral';
  return <span className={`badge ${tone}`} title={item.sla_deadline ?? undefined}>{item.sla_remaining_days} d left</span>;
}

export function ReviewQueuePage() {
  const { session } = useSession();
  const [params, setParams] = useSearchParams();
  const sort = params.get('sort') ?? 'risk';
  const status = params.get('status') ?? 'pending_review';
  const distribution = params.get('distribution') ?? '';
  const page = Number(params.get('page') ?? '1') || 1;
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value); else next.delete(key);
    if (key !== 'page') next.delete('page');
    setParams(next, { replace: true });
  };
  const [deciding, setDeciding] = useState<DecideTarget | null>(null);
  const distributions = useDistributions();
  const queue = useQuery({
    queryKey: ['review-queue', sort, status, distribution, page],
    queryFn: () => api<Page<QueueItem>>('GET', `/security/review-queue${query({ sort, status, distribution, page, per_page: 50 })}`),
    placeholderData: keepPreviousData,
  });
  const mayDecide = can(session, 'decide');

  return (
    <>
      <h1>Review queue</h1>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label htmlFor="rq-sort">Order</label>
          <select id="rq-sort" value={sort} onChange={(e) => set('sort', e.target.value)}>
            <option value="risk">Risk: KEV, then EPSS, then CVSS</option>
            <option value="sla">SLA deadline</option>
          </select>
        </div>
        <div>
          <label htmlFor="rq-status">Status</label>
          <select id="rq-status" value={status} onChange={(e) => set('status', e.target.value)}>
            <option value="pending_review">Pending review</option>
            <option value="upgrade_required">Upgrade required</option>
            <option value="all">Both</option>
          </select>
        </div>
        <div>
          <label htmlFor="rq-dist">Distribution</label>
          <select id="rq-dist" value={distribution} onChange={(e) => set('distribution', e.target.value)}>
            <option value="">All</option>
            {distributions.data?.map((d) => <option key={d.codename} value={d.codename}>{d.codename}</option>)}
          </select>
        </div>
      </form>
      <ErrorNotice error={queue.error} />
      {queue.isPending ? <Loading what="the review queue" /> : queue.data && (
        queue.data.items.length === 0 ? <p className="muted">Nothing awaits review.</p> : (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Package</th><th scope="col">Distribution</th><th scope="col">Status</th><th scope="col">Worst</th><th scope="col">KEV</th>
                  <th scope="col" className="num">EPSS</th><th scope="col" className="num">CVSS</th><th scope="col" className="num">Findings</th><th scope="col">SLA</th>
                  {mayDecide && <th scope="col"><span className="visually-hidden">Actions</span></th>}
                </tr>
              </thead>
              <tbody>
                {queue.data.items.map((item) => (
                  <tr key={`${item.name}/${item.version}/${item.arch}/${item.distribution}`}>
                    <td><Link to={`/packages/${encodeURIComponent(item.name)}`}>{item.name}</Link> {item.version} <span className="muted">{item.arch}</span></td>
                    <td>{item.distribution}</td>
                    <td><StatusBadge status={item.status} /></td>
                    <td><SeverityBadge severity={item.worst_severity} /></td>
                    <td><KevBadge inKev={item.in_kev} /></td>
                    <td className="num">{percent(item.epss)}</td>
                    <td className="num">{item.cvss_score ?? '–'}</td>
                    <td className="num" title={item.held_because.map(label).join(', ')}>{item.findings_count}</td>
                    <td><SlaCountdown item={item} /></td>
                    {mayDecide && (
                      <td>
                        <button type="button" className="small" onClick={() => setDeciding(item)} aria-label={`Decide on ${item.name} ${item.version}`}>Decide</button>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination page={page} pages={queue.data.pages} onPage={(n) => set('page', String(n))} />
          </>
        )
      )}
      {mayDecide && <DecideDialog target={deciding} onClose={() => setDeciding(null)} />}
    </>
  );
}
