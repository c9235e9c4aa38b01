import { useState } from 'react';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, query } from '../api';
import { ErrorNotice, label, Loading, Pagination, StatusBadge, when } from '../components/bits';
import type { AuditEntry, Page } from '../types';

interface Verification {
  ok: boolean;
  entries: number;
  files: number;
  first_broken: { file: string; line: number; seq: number | null; reason: string } | null;
}

const ACTIONS = ['UPLOAD', 'DELETE', 'IMPORT', 'SYNC', 'LOGIN', 'LOGOUT', 'USER_CREATE', 'USER_UPDATE', 'USER_DELETE', 'USER_ROLE_CHANGE', 'PASSWORD_CHANGE', 'PASSWORD_RESET', 'SECURITY_DECISION', 'QUARANTINE', 'RESCAN', 'CLAMAV_UPDATE', 'SETTINGS_CHANGE', 'GPG_GENERATE', 'INIT_DISTS', 'IMPORT_GROUP_DELETE', 'PROMOTE', 'MIGRATE', 'TOKEN_CREATE', 'TOKEN_REVOKE', 'MFA_CHANGE', 'SYNC_INDEX', 'RETENTION', 'SETTINGS_TEST', 'IMPORT_SOURCE_CHANGE'];

export function AuditPage() {
  const [params, setParams] = useSearchParams();
  const filters = { q: params.get('q') ?? '', action: params.get('action') ?? '', result: params.get('result') ?? '', user: params.get('user') ?? '', package: params.get('package') ?? '' };
  const page = Number(params.get('page') ?? '1') || 1;
  const [draft, setDraft] = useState(filters);
  const apply = (next: typeof filters, nextPage = 1) => {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(next)) if (v) search.set(k, v);
    if (nextPage > 1) search.set('page', String(nextPage));
    setParams(search, { replace: true });
  };
  const entries = useQuery({
    queryKey: ['audit', filters, page],
    queryFn: () => api<Page<AuditEntry>>('GET', `/artifacts/audit/logs${query({ ...filters, page, per_page: 50 })}`),
    placeholderData: keepPreviousData,
  });
  const verify = useMutation({ mutationFn: () => api<Verification>('GET', '/audit/verify') });

  return (
    <>
      <h1>Audit log</h1>
      <form className="filters" onSubmit={(e) => { e.preventDefault(); apply(draft); }}>
        <div><label htmlFor="au-q">Text</label><input id="au-q" type="search" value={draft.q} onChange={(e) => setDraft({ ...draft, q: e.target.value })} /></div>
        <div>
          <label htmlFor="au-action">Action</label>
          <select id="au-action" value={draft.action} onChange={(e) => setDraft({ ...draft, action: e.target.value })}>
            <option value="">Any</option>{ACTIONS.map((a) => <option key={a} value={a}>{label(a)}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="au-result">Result</label>
          <select id="au-result" value={draft.result} onChange={(e) => setDraft({ ...draft, result: e.target.value })}>
            <option value="">Any</option><option>SUCCESS</option><option>FAILURE</option><option>WARNING</option>
          </select>
        </div>
        <div><label htmlFor="au-user">User</label><input id="au-user" value={draft.user} onChange={(e) => setDraft({ ...draft, user: e.target.value })} /></div>
        <div><label htmlFor="au-package">Package</label><input id="au-package" value={draft.package} onChange={(e) => setDraft({ ...draft, package: e.target.value })} /></div>
        <button type="submit">Filter</button>
      </form>
      <section aria-labelledby="chain" className="inline">
        <h2 id="chain" className="visually-hidden">Chain verification</h2>
        <button type="button" className="secondary" onClick={() => verify.mutate()} disabled={verify.isPending}>Verify the hash chain</button>
        {verify.data && (
          <span role="status" className={`notice ${verify.data.ok ? 'good' : 'bad'}`}>
            {verify.data.ok
              ? `Intact: ${verify.data.entries} entries in ${verify.data.files} files.`
              : `Broken at ${verify.data.first_broken?.file}:${verify.data.first_broken?.line}: ${verify.data.first_broken?.reason}`}
          </span>
        )}
        <ErrorNotice error={verify.error} />
      </section>
      <ErrorNotice error={entries.error} />
      {entries.isPending ? <Loading what="the audit log" /> : (
        <>
          <table>
            <thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Action</th><th scope="col">User</th><th scope="col">IP</th><th scope="col">Package</th><th scope="col">Detail</th><th scope="col">Result</th></tr></thead>
            <tbody>
              {entries.data?.items.map((e) => (
                <tr key={e.seq}><td>{e.seq}</td><td>{when(e.timestamp)}</td><td>{label(e.action)}</td><td>{e.user ?? '–'}</td><td>{e.ip ?? '–'}</td><td>{e.package ? `${e.package} ${e.version ?? ''}` : '–'}</td><td className="detail">{e.detail}</td><td><StatusBadge status={e.result} /></td></tr>
              ))}
            </tbody>
          </table>
          <Pagination page={page} pages={entries.data?.pages ?? 1} onPage={(n) => apply(filters, n)} />
        </>
      )}
    </>
  );
}
