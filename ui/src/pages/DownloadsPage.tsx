import { useQuery, keepPreviousData } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, query } from '../api';
import { ErrorNotice, Loading } from '../components/bits';
import { DayBars } from '../components/DayBars';
import { useSession } from '../session';

interface TokenDownloads {
  token_id: string;
  username: string;
  name: string | null;
  kind: 'api' | 'read' | null;
  downloads: number;
}

export interface DownloadStats {
  days: number;
  from: string;
  to: string;
  total: number;
  distinct_packages: number;
  by_day: Array<{ day: string; downloads: number }>;
  by_distribution: Array<{ distribution: string | null; downloads: number }>;
  packages: Array<{ name: string; version: string; distribution: string | null; arch: string; downloads: number }>;
  by_token?: TokenDownloads[];
}

const WINDOWS = [7, 30, 90] as const;


/**
 * GET /downloads/stats: package files fetched from /repo/ (and read from proxy logs) over 7, 30
 * or 90 days. Everyone sees the totals; the downloads per token are each caller's own tokens, all
 * tokens for admins (the service chooses).
 */
export function DownloadsPage() {
  const { session } = useSession();
  const [params, setParams] = useSearchParams();
  const days = WINDOWS.find((w) => String(w) === params.get('days')) ?? 30;
  const stats = useQuery({
    queryKey: ['downloads', days],
    queryFn: () => api<DownloadStats>('GET', `/downloads/stats${query({ days, limit: 20 })}`),
    placeholderData: keepPreviousData,
  });
  const admin = session?.role === 'admin';
  return (
    <>
      <h1>Downloads</h1>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label htmlFor="dl-days">Period</label>
          <select id="dl-days" value={days} onChange={(e) => setParams({ days: e.target.value }, { replace: true })}>
            {WINDOWS.map((w) => <option key={w} value={w}>Last {w} days</option>)}
          </select>
        </div>
      </form>
      <ErrorNotice error={stats.error} />
      {stats.isPending ? <Loading what="download statistics" /> : stats.data && (
        <>
          <section className="cards" aria-label="Totals">
            <div className="card"><span className="number" data-testid="downloads-total">{stats.data.total}</span><span>downloads</span></div>
            <div className="card"><span className="number">{stats.data.distinct_packages}</span><span>packages downloaded</span></div>
          </section>
          <DayBars days={stats.data.by_day.map((d) => ({ day: d.day, count: d.downloads }))} what="Downloads" />
          <div className="columns">
            <section aria-labelledby="dl-packages">
              <h2 id="dl-packages">Most downloaded</h2>
              {stats.data.packages.length === 0 ? <p className="muted">No downloads in this period.</p> : (
                <table>
                  <thead><tr><th scope="col">Package</th><th scope="col">Version</th><th scope="col">Arch</th><th scope="col">Distribution</th><th scope="col" className="num">Downloads</th></tr></thead>
                  <tbody>
                    {stats.data.packages.map((p) => (
                      <tr key={`${p.name}/${p.version}/${p.arch}/${p.distribution}`}>
                        <td><Link to={`/packages/${encodeURIComponent(p.name)}`}>{p.name}</Link></td><td>{p.version}</td><td>{p.arch}</td><td>{p.distribution ?? 'several'}</td><td className="num">{p.downloads}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </section>
            <section aria-labelledby="dl-dists">
              <h2 id="dl-dists">By distribution</h2>
              {stats.data.by_distribution.length === 0 ? <p className="muted">No downloads in this period.</p> : (
                <table>
                  <thead><tr><th scope="col">Distribution</th><th scope="col" className="num">Downloads</th></tr></thead>
                  <tbody>
                    {stats.data.by_distribution.map((d) => <tr key={d.distribution ?? '-'}><td>{d.distribution ?? 'shared pool files'}</td><td className="num">{d.downloads}</td></tr>)}
                  </tbody>
                </table>
              )}
            </section>
          </div>
          {stats.data.by_token && (
            <section aria-labelledby="dl-tokens">
              <h2 id="dl-tokens">{admin ? 'By token' : 'By your tokens'}</h2>
              {stats.data.by_token.length === 0 ? <p className="muted">No downloads made with {admin ? 'a token' : 'your tokens'} in this period.</p> : (
                <table>
                  <thead><tr><th scope="col">Token</th><th scope="col">Kind</th><th scope="col">Owner</th><th scope="col" className="num">Downloads</th></tr></thead>
                  <tbody>
                    {stats.data.by_token.map((t) => (
                      <tr key={t.token_id}><td>{t.name ?? <span className="muted">(deleted)</span>}</td><td>{t.kind ?? '–'}</td><td>{t.username}</td><td className="num">{t.downloads}</td></tr>
                    ))}
                  </tbody>
                </table>
              )}
            </section>
          )}
        </>
      )}
    </>
  );
}
