import { useQuery, keepPreviousData } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, query } from '../api';
import { ErrorNotice, label, Loading, Pagination, SeverityBadge, StatusBadge, when } from '../components/bits';
import { PACKAGE_STATUSES, SEVERITIES, type Distribution, type Page, type PackageVersion, type Severity } from '../types';

const PER_PAGE = 50;

function worst(findings: Record<string, number>): Severity | null {
  return SEVERITIES.find((sev) => (findings[sev] ?? 0) > 0) ?? null;
}

export function useDistributions() {
  return useQuery({ queryKey: ['distributions'], queryFn: () => api<Distribution[]>('GET', '/distributions/'), staleTime: 60_000 });
}

export function PackagesPage() {
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const distribution = params.get('distribution') ?? '';
  const status = params.get('status') ?? '';
  const page = Number(params.get('page') ?? '1') || 1;
  const set = (changes: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [key, value] of Object.entries(changes)) if (value) next.set(key, value); else next.delete(key);
    if (!('page' in changes)) next.delete('page');
    setParams(next, { replace: true });
  };
  const distributions = useDistributions();
  // Every filter is the service's, so the total and the pages count the matching versions only.
  const list = useQuery({
    queryKey: ['packages', q, distribution, status, page],
    queryFn: () => api<Page<PackageVersion>>('GET', `/packages/${query({ q, distribution, status, page, per_page: PER_PAGE })}`),
    placeholderData: keepPreviousData,
  });
  const rows = list.data?.items ?? [];

  return (
    <>
      <h1>Packages</h1>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label htmlFor="pkg-q">Search</label>
          <input id="pkg-q" type="search" value={q} placeholder="Package name" onChange={(e) => set({ q: e.target.value })} />
        </div>
        <div>
          <label htmlFor="pkg-dist">Distribution</label>
          <select id="pkg-dist" value={distribution} onChange={(e) => set({ distribution: e.target.value })}>
            <option value="">All</option>
            {distributions.data?.map((d) => <option key={d.codename} value={d.codename}>{d.codename}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="pkg-status">Status</label>
          <select id="pkg-status" value={status} onChange={(e) => set({ status: e.target.value })}>
            <option value="">Any</option>
            {PACKAGE_STATUSES.map((s) => <option key={s} value={s}>{label(s)}</option>)}
          </select>
        </div>
      </form>
      <ErrorNotice error={list.error} />
      {list.isPending ? <Loading what="packages" /> : (
        <>
          <p className="muted" role="status">{list.data?.total ?? 0} package versions{status ? ` ${label(status)}` : ''}</p>
          <table>
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Version</th><th scope="col">Arch</th><th scope="col">Distribution</th><th scope="col">Status</th><th scope="col">Worst finding</th><th scope="col">Uploaded</th></tr>
            </thead>
            <tbody>
              {rows.map((p) => (
                <tr key={p.id}>
                  <td><Link to={`/packages/${encodeURIComponent(p.name)}`}>{p.name}</Link></td>
                  <td>{p.version}</td>
                  <td>{p.arch}</td>
                  <td>{p.distribution}</td>
                  <td><StatusBadge status={p.status} /></td>
                  <td><SeverityBadge severity={worst(p.findings)} /></td>
                  <td>{when(p.uploaded_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pagination page={page} pages={list.data?.pages ?? 1} onPage={(n) => set({ page: String(n) })} />
        </>
      )}
    </>
  );
}
