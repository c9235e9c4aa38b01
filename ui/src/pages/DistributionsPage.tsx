import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, enc, query } from '../api';
import { ErrorNotice, Loading, when } from '../components/bits';
import { useEnterprise } from '../edition';
import { can } from '../permissions';
import { useSession } from '../session';
import type { Distribution } from '../types';
import { CreateDistribution, EditDistribution } from './DistributionEditor';
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

/** Auditors and up: the distribution's SBOM (every package it publishes), streamed by the service. */
function SbomLinks({ codename }: { codename: string }) {
  const href = (format: string) => `/sbom/export${query({ distribution: codename, format })}`;
  return (
    <span className="row-actions">
      <a href={href('cyclonedx')} download aria-label={`CycloneDX SBOM of ${codename}`}>CycloneDX</a>
      <a href={href('spdx')} download aria-label={`SPDX SBOM of ${codename}`}>SPDX</a>
    </span>
  );
}

/** Admins: edit (a dialog) and retire (confirmed; the packages are kept) a distribution. */
function AdminActions({ distribution }: { distribution: Distribution }) {
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const retire = useMutation({
    mutationFn: () => api('DELETE', `/distributions/${enc(distribution.codename)}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['distributions'] }),
  });
  const confirmRetire = () => {
    if (window.confirm(`Retire ${distribution.codename}? Its published tree is removed; its packages are kept until deleted.`)) retire.mutate();
  };
  return (
    <span className="row-actions">
      <button type="button" className="secondary small" onClick={() => setEditing(true)} aria-label={`Edit ${distribution.codename}`}>Edit</button>
      {!distribution.built_in && (
        <button type="button" className="danger small" disabled={retire.isPending} onClick={confirmRetire} aria-label={`Retire ${distribution.codename}`}>Retire</button>
      )}
      <ErrorNotice error={retire.error} />
      {editing && <EditDistribution distribution={distribution} onClose={() => setEditing(false)} />}
    </span>
  );
}

export function DistributionsPage() {
  const { session } = useSession();
  const distributions = useDistributions();
  const admin = can(session, 'manage_distributions');
  // SBOMs are Enterprise's: on Community the column says so instead of linking to a 402.
  const enterprise = useEnterprise();
  const sbom = can(session, 'sbom') && enterprise !== undefined;
  return (
    <>
      <h1>Distributions</h1>
      <ErrorNotice error={distributions.error} />
      {distributions.isPending ? <Loading what="distributions" /> : (
        <table>
          <thead>
            <tr>
              <th scope="col">Codename</th><th scope="col">Description</th><th scope="col">Format</th><th scope="col">Architectures</th><th scope="col">Components</th><th scope="col">Access</th>
              <th scope="col" className="num">Packages</th><th scope="col">Index published</th>
              {sbom && <th scope="col">SBOM</th>}
              {admin && <th scope="col"><span className="visually-hidden">Actions</span></th>}
            </tr>
          </thead>
          <tbody>
            {distributions.data?.map((d) => (
              <tr key={d.codename}>
                <td>{d.codename}</td><td>{d.description}</td><td>{d.format}</td><td>{d.index_architectures.join(', ')}</td><td>{d.components.join(', ') || '–'}</td>
                <td>{d.private ? 'private' : 'public'}</td>
                <td className="num">{d.package_count}</td><td>{when(d.published_at)}{d.up_to_date ? '' : ' (rebuild pending)'}</td>
                {sbom && <td>{enterprise ? <SbomLinks codename={d.codename} /> : <span className="muted">Enterprise edition</span>}</td>}
                {admin && <td><AdminActions distribution={d} /></td>}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {admin && <CreateDistribution />}
      {can(session, 'promote') && <PromoteForms />}
    </>
  );
}
