import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { ErrorNotice, Loading, when } from '../components/bits';
import { can } from '../permissions';
import { useSession } from '../session';
import { useDistributions } from './PackagesPage';

interface Promoted {
  promoted: Array<{ package: string; version: string; arch: string; from: string; to: string; status: string; result: string }>;
}

function PromoteForms() {
  const client = useQueryClient();
  const distributions = useDistributions();
  const [promote, setPromote] = useState({ name: '', version: '', from: '', to: '' });
  const [migrate, setMigrate] = useState({ from: '', to: '', packages: '' });
  const promoting = useMutation({
    mutationFn: () => api<Promoted>('POST', '/distributions/promote', { name: promote.name, ...(promote.version ? { version: promote.version } : {}), from_distribution: promote.from, to_distribution: promote.to }),
    onSuccess: () => client.invalidateQueries(),
  });
  const migrating = useMutation({
    mutationFn: () => {
      const names = migrate.packages.split(/[\s,]+/).filter(Boolean);
      return api<Promoted>('POST', '/distributions/migrate', { from_distribution: migrate.from, to_distribution: migrate.to, ...(names.length ? { packages: names } : {}) });
    },
    onSuccess: () => client.invalidateQueries(),
  });
  const options = distributions.data?.map((d) => <option key={d.codename} value={d.codename}>{d.codename}</option>);
  const onPromote = (e: FormEvent) => { e.preventDefault(); promoting.mutate(); };
  const onMigrate = (e: FormEvent) => { e.preventDefault(); migrating.mutate(); };
  const outcome = (data: Promoted | undefined) => data && (
    <ul role="status">{data.promoted.map((p) => <li key={`${p.package}/${p.version}/${p.arch}/${p.to}`}>{p.package} {p.version} ({p.arch}) {p.from} → {p.to}: {p.result}</li>)}</ul>
  );
  return (
    <div className="columns">
      <form onSubmit={onPromote} className="grid-form" aria-labelledby="promote">
        <h2 id="promote">Promote a package</h2>
        <label htmlFor="pr-name">Package</label>
        <input id="pr-name" required value={promote.name} onChange={(e) => setPromote({ ...promote, name: e.target.value })} />
        <label htmlFor="pr-version">Version (empty: latest)</label>
        <input id="pr-version" value={promote.version} onChange={(e) => setPromote({ ...promote, version: e.target.value })} />
        <label htmlFor="pr-from">From</label>
        <select id="pr-from" required value={promote.from} onChange={(e) => setPromote({ ...promote, from: e.target.value })}><option value="">Choose…</option>{options}</select>
        <label htmlFor="pr-to">To</label>
        <select id="pr-to" required value={promote.to} onChange={(e) => setPromote({ ...promote, to: e.target.value })}><option value="">Choose…</option>{options}</select>
        <ErrorNotice error={promoting.error} />
        {outcome(promoting.data)}
        <button type="submit" disabled={promoting.isPending}>Promote</button>
      </form>
      <form onSubmit={onMigrate} className="grid-form" aria-labelledby="migrate">
        <h2 id="migrate">Migrate packages</h2>
        <label htmlFor="mg-from">From</label>
        <select id="mg-from" required value={migrate.from} onChange={(e) => setMigrate({ ...migrate, from: e.target.value })}><option value="">Choose…</option>{options}</select>
        <label htmlFor="mg-to">To</label>
        <select id="mg-to" required value={migrate.to} onChange={(e) => setMigrate({ ...migrate, to: e.target.value })}><option value="">Choose…</option>{options}</select>
        <label htmlFor="mg-packages">Packages (names; empty: all)</label>
        <textarea id="mg-packages" rows={3} value={migrate.packages} onChange={(e) => setMigrate({ ...migrate, packages: e.target.value })} />
        <ErrorNotice error={migrating.error} />
        {outcome(migrating.data)}
        <button type="submit" disabled={migrating.isPending}>Migrate</button>
      </form>
    </div>
  );
}

export function DistributionsPage() {
  const { session } = useSession();
  const distributions = useDistributions();
  return (
    <>
      <h1>Distributions</h1>
      <ErrorNotice error={distributions.error} />
      {distributions.isPending ? <Loading what="distributions" /> : (
        <table>
          <thead><tr><th scope="col">Codename</th><th scope="col">Description</th><th scope="col">Format</th><th scope="col">Architecture</th><th scope="col" className="num">Packages</th><th scope="col">Index published</th></tr></thead>
          <tbody>
            {distributions.data?.map((d) => (
              <tr key={d.codename}><td>{d.codename}</td><td>{d.description}</td><td>{d.format}</td><td>{d.architecture}</td><td className="num">{d.package_count}</td><td>{when(d.published_at)}{d.up_to_date ? '' : ' (rebuild pending)'}</td></tr>
            ))}
          </tbody>
        </table>
      )}
      {can(session, 'promote') && <PromoteForms />}
    </>
  );
}
