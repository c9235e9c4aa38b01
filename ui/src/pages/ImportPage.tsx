import { useEffect, useRef, useState, type FormEvent } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, enc, query } from '../api';
import { bytes, ErrorNotice, Loading, Pagination, StatusBadge, when } from '../components/bits';
import { can } from '../permissions';
import { useSession } from '../session';
import { streamPost } from '../stream';
import type { Page } from '../types';
import { useDistributions } from './PackagesPage';

interface SyncStatus {
  source_id: string;
  name: string;
  type: string;
  distribution: string;
  status: string;
  count: number;
  last_sync: string | null;
  last_error: string | null;
}
interface CatalogEntry {
  name: string;
  version: string;
  arch: string;
  summary: string;
  size: number;
  source_id: string;
  source: string;
  distribution: string;
}
interface Resolution {
  package: string;
  version: string;
  packages: Array<{ name: string; version: string; arch: string; source: string; size: number; reason: string; required_by: string | null; depth: number }>;
  already_present: unknown[];
  unsatisfiable: Array<{ required_by: string; relation: string; reason: string }>;
  total: number;
  resolvable: boolean;
}
interface Imported {
  name: string;
  version: string;
  arch: string;
  status: string;
  detail: string | null;
}
interface ImportReport {
  group?: string;
  packages?: Imported[];
  detail?: string;
  http_status?: number;
}

function Sources() {
  const { session } = useSession();
  const client = useQueryClient();
  const status = useQuery({ queryKey: ['import', 'sync-status'], queryFn: () => api<SyncStatus[]>('GET', '/import/sync-status') });
  const [live, setLive] = useState<Record<string, { status: string; count: number }>>({});
  const sync = useMutation({
    mutationFn: (id: string) =>
      streamPost<{ status: string; count: number; detail?: string }>(`/import/sources/${enc(id)}/sync`, undefined, ({ data }) => {
        const d = data as { status: string; count: number };
        setLive((prev) => ({ ...prev, [id]: { status: d.status, count: d.count } }));
      }),
    onSettled: () => client.invalidateQueries({ queryKey: ['import'] }),
  });
  const maySync = can(session, 'import_sources');
  return (
    <section aria-labelledby="sources">
      <h2 id="sources">Sources</h2>
      <ErrorNotice error={status.error ?? sync.error} />
      {status.isPending ? <Loading what="sources" /> : status.data?.length === 0 ? <p className="muted">No upstream source is configured.</p> : (
        <table>
          <thead><tr><th scope="col">Source</th><th scope="col">Type</th><th scope="col">Into</th><th scope="col">Status</th><th scope="col" className="num">Packages</th><th scope="col">Last sync</th>{maySync && <th scope="col"><span className="visually-hidden">Actions</span></th>}</tr></thead>
          <tbody>
            {status.data?.map((s) => {
              const now = sync.isPending && sync.variables === s.source_id ? live[s.source_id] : undefined;
              return (
                <tr key={s.source_id}>
                  <td>{s.name}</td><td>{s.type}</td><td>{s.distribution}</td>
                  <td><StatusBadge status={now?.status ?? s.status} />{s.last_error && !now ? <span className="muted"> {s.last_error}</span> : null}</td>
                  <td className="num" aria-live="polite">{now?.count ?? s.count}</td><td>{when(s.last_sync)}</td>
                  {maySync && <td><button type="button" className="small" disabled={sync.isPending} onClick={() => sync.mutate(s.source_id)} aria-label={`Sync ${s.name}`}>Sync</button></td>}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Preview({ entry, onImport, mayImport }: { entry: CatalogEntry; onImport: () => void; mayImport: boolean }) {
  const resolution = useQuery({
    queryKey: ['import', 'resolve', entry.name, entry.version, entry.arch, entry.distribution],
    queryFn: () => api<Resolution>('GET', `/import/resolve/${enc(entry.name)}${query({ version: entry.version, arch: entry.arch, distribution: entry.distribution })}`),
  });
  if (resolution.isPending) return <Loading what="the dependency resolution" />;
  if (resolution.error) return <ErrorNotice error={resolution.error} />;
  const r = resolution.data;
  return (
    <section aria-labelledby="preview" className="notice">
      <h3 id="preview">{r.package} {r.version}: {r.total} package{r.total === 1 ? '' : 's'} to import, {r.already_present.length} requirement{r.already_present.length === 1 ? '' : 's'} already met</h3>
      <ul>
        {r.packages.map((p) => <li key={`${p.name}/${p.version}/${p.arch}`}>{p.name} {p.version} ({p.arch}, {bytes(p.size)}) <span className="muted">{p.required_by ? `for ${p.required_by}` : p.reason}</span></li>)}
      </ul>
      {r.unsatisfiable.length > 0 && (
        <>
          <p><strong>Cannot be met:</strong></p>
          <ul>{r.unsatisfiable.map((u) => <li key={`${u.required_by}/${u.relation}`}>{u.required_by}: {u.relation} ({u.reason})</li>)}</ul>
        </>
      )}
      {mayImport && <button type="button" onClick={onImport} disabled={!r.resolvable}>Import {r.total} package{r.total === 1 ? '' : 's'}</button>}
    </section>
  );
}

function Fetch({ entry }: { entry: CatalogEntry }) {
  const client = useQueryClient();
  const [progress, setProgress] = useState<{ done: number; total: number; items: Imported[] }>({ done: 0, total: 0, items: [] });
  const run = useMutation({
    mutationFn: () =>
      streamPost<ImportReport>('/import/fetch', { name: entry.name, version: entry.version, arch: entry.arch, distribution: entry.distribution }, ({ event, data }) => {
        if (event === 'resolved') setProgress({ done: 0, total: (data as { total: number }).total, items: [] });
        if (event === 'package') {
          // index counts from 1: the package just finished is the index-th of total.
          const d = data as { index: number; total: number; package: Imported };
          setProgress((prev) => ({ done: d.index, total: d.total, items: [...prev.items, d.package] }));
        }
      }),
    onSettled: () => client.invalidateQueries(),
  });
  // Started once, when the preview's Import button shows this (a guard, as React may mount twice in development).
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    run.mutate();
  }, [run]);
  return (
    <section aria-labelledby="fetching">
      <h3 id="fetching">Importing {entry.name} {entry.version}</h3>
      <label htmlFor="import-progress">{progress.done} of {progress.total || '…'} packages</label>
      <progress id="import-progress" max={progress.total || 1} value={progress.done} />
      <ul aria-live="polite">{progress.items.map((p) => <li key={`${p.name}/${p.version}/${p.arch}`}><StatusBadge status={p.status} /> {p.name} {p.version} <span className="muted">{p.detail}</span></li>)}</ul>
      <ErrorNotice error={run.error} />
      {run.data?.detail && <p role="alert" className="notice bad">{run.data.detail}</p>}
      {run.isSuccess && !run.data.detail && <p role="status" className="notice good">Done: group {run.data.group}.</p>}
    </section>
  );
}

export function ImportPage() {
  const { session } = useSession();
  const distributions = useDistributions();
  const [q, setQ] = useState('');
  const [term, setTerm] = useState('');
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<CatalogEntry | null>(null);
  const [importing, setImporting] = useState(false);
  const results = useQuery({
    queryKey: ['import', 'search', term, page],
    queryFn: () => api<Page<CatalogEntry>>('GET', `/import/search${query({ q: term, page, per_page: 25 })}`),
    enabled: term.length > 0,
    placeholderData: keepPreviousData,
  });
  const mayImport = can(session, 'import');
  const search = (event: FormEvent) => {
    event.preventDefault();
    setTerm(q.trim());
    setPage(1);
    setSelected(null);
  };
  return (
    <>
      <h1>Import</h1>
      <Sources />
      <section aria-labelledby="catalog">
        <h2 id="catalog">Search the upstream catalog</h2>
        <form className="filters" role="search" onSubmit={search}>
          <div><label htmlFor="im-q">Package</label><input id="im-q" type="search" value={q} onChange={(e) => setQ(e.target.value)} /></div>
          <button type="submit">Search</button>
        </form>
        <ErrorNotice error={results.error} />
        {results.data && (
          <>
            <p className="muted" role="status">{results.data.total} matches</p>
            <table>
              <thead><tr><th scope="col">Name</th><th scope="col">Version</th><th scope="col">Arch</th><th scope="col">Source</th><th scope="col">Into</th><th scope="col">Summary</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {results.data.items.map((e) => (
                  <tr key={`${e.source_id}/${e.name}/${e.version}/${e.arch}`}>
                    <td>{e.name}</td><td>{e.version}</td><td>{e.arch}</td><td>{e.source}</td>
                    <td>{distributions.data?.some((d) => d.codename === e.distribution) ? e.distribution : <span className="muted">{e.distribution}</span>}</td>
                    <td>{e.summary}</td>
                    <td><button type="button" className="secondary small" onClick={() => { setSelected(e); setImporting(false); }} aria-label={`Preview ${e.name} ${e.version}`}>Preview</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination page={page} pages={results.data.pages} onPage={setPage} />
          </>
        )}
        {selected && !importing && <Preview entry={selected} mayImport={mayImport} onImport={() => setImporting(true)} />}
        {selected && importing && <Fetch key={`${selected.name}/${selected.version}`} entry={selected} />}
      </section>
    </>
  );
}
