import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { api, enc, query } from '../api';
import { bytes, CopyButton, ErrorNotice, KevBadge, label, Loading, percent, SeverityBadge, StatusBadge, when } from '../components/bits';
import { useEnterprise } from '../edition';
import { can } from '../permissions';
import { useSession } from '../session';
import type { ArtifactDetail, AuditEntry, Page, PackageVersion } from '../types';
import { useDistributions } from './PackagesPage';

/** Maintainer actions on one version: rescan, quarantine, delete (each confirmed, each audited by the service). */
function VersionActions({ version, onDeleted }: { version: PackageVersion; onDeleted: () => void }) {
  const client = useQueryClient();
  const where = query({ arch: version.arch, distribution: version.distribution });
  const path = `${enc(version.name)}/${enc(version.version)}`;
  const act = useMutation({
    mutationFn: async (action: 'rescan' | 'quarantine' | 'delete') => {
      if (action === 'delete') return api('DELETE', `/artifacts/${path}${where}`);
      return api('POST', `/security/packages/${path}/${action}${where}`, action === 'quarantine' ? { reason: 'quarantined from the web interface' } : {});
    },
    onSuccess: async (_answer, action) => {
      await client.invalidateQueries();
      if (action === 'delete') onDeleted();
    },
  });
  const confirmThen = (action: 'quarantine' | 'delete', question: string) => {
    if (window.confirm(question)) act.mutate(action);
  };
  const what = `${version.version} in ${version.distribution}`;
  return (
    <span className="row-actions">
      <button type="button" className="secondary small" disabled={act.isPending} onClick={() => act.mutate('rescan')} aria-label={`Rescan ${what}`}>Rescan</button>
      {version.status !== 'quarantined' && (
        <button type="button" className="secondary small" disabled={act.isPending} onClick={() => confirmThen('quarantine', `Quarantine ${version.name} ${what}? It leaves the index.`)} aria-label={`Quarantine ${what}`}>Quarantine</button>
      )}
      <button type="button" className="danger small" disabled={act.isPending} onClick={() => confirmThen('delete', `Delete ${version.name} ${what}?`)} aria-label={`Delete ${what}`}>Delete</button>
      <ErrorNotice error={act.error} />
    </span>
  );
}

interface Install {
  format: string;
  distribution: string;
  commands: string[];
  source_line?: string;
  repo_file?: string;
}

/**
 * The service's commands. A private distribution is read with a credential the commands take from
 * $TOLLGATE_TOKEN: the page says to set it to a read token, which reads that distribution's files
 * and nothing else, rather than to an API token, and links to where one is made.
 */
function InstallCommands({ name }: { name: string }) {
  const { session } = useSession();
  const install = useQuery({ queryKey: ['install', name], queryFn: () => api<Install>('GET', `/artifacts/${enc(name)}/install`), retry: false });
  const distributions = useDistributions();
  if (install.isPending) return <Loading what="install commands" />;
  if (install.error) return <ErrorNotice error={install.error} />;
  const codename = install.data.distribution;
  const isPrivate = distributions.data?.find((d) => d.codename === codename)?.private ?? false;
  const text = [
    ...(isPrivate ? ["export TOLLGATE_TOKEN='tg_r_…'  # a read token for this distribution"] : []),
    ...(install.data.repo_file ? [install.data.repo_file] : []),
    ...install.data.commands,
  ].join('\n');
  return (
    <>
      {isPrivate && (
        <p className="notice" data-testid="private-install">
          <strong>{codename}</strong> is private: the machine reads it with a read token (<code>tg_r_</code>), which reads only
          the distributions it names and cannot call the API. Put it in <code>TOLLGATE_TOKEN</code> before running the commands.{' '}
          {can(session, 'api_tokens')
            ? <Link to={`/tokens?read=${enc(codename)}`}>Create a read token for {codename}</Link>
            : <>Ask an uploader, maintainer or administrator for a read token for {codename}.</>}
        </p>
      )}
      <div className="code-block">
        <pre tabIndex={0}><code>{text}</code></pre>
        <CopyButton text={text} what="install commands" />
      </div>
    </>
  );
}

function DecisionHistory({ name }: { name: string }) {
  const history = useQuery({ queryKey: ['audit', 'package', name], queryFn: () => api<Page<AuditEntry>>('GET', `/audit/package/${enc(name)}?per_page=200`) });
  if (history.isPending) return <Loading what="decision history" />;
  if (history.error) return <ErrorNotice error={history.error} />;
  const decisions = history.data.items.filter((e) => e.action === 'SECURITY_DECISION' || e.action === 'QUARANTINE');
  if (decisions.length === 0) return <p className="muted">No decisions yet.</p>;
  return (
    <table>
      <thead><tr><th scope="col">When</th><th scope="col">Version</th><th scope="col">By</th><th scope="col">Decision</th><th scope="col">Result</th></tr></thead>
      <tbody>
        {decisions.map((e) => (
          <tr key={e.seq}><td>{when(e.timestamp)}</td><td>{e.version}</td><td>{e.user}</td><td>{e.detail}</td><td><StatusBadge status={e.result} /></td></tr>
        ))}
      </tbody>
    </table>
  );
}

export function PackagePage() {
  const { name = '' } = useParams();
  const { session } = useSession();
  const navigate = useNavigate();
  const detail = useQuery({ queryKey: ['artifact', name], queryFn: () => api<ArtifactDetail>('GET', `/artifacts/${enc(name)}`) });
  // SBOMs are Enterprise's (402 on Community): linked only there.
  const enterprise = useEnterprise();
  const sbom = can(session, 'sbom') && enterprise === true;
  if (detail.isPending) return <Loading what={name} />;
  if (detail.error) return <ErrorNotice error={detail.error} />;
  const a = detail.data;
  return (
    <>
      <h1>{a.name} <span className="muted">{a.format}</span></h1>
      <section aria-labelledby="versions">
        <h2 id="versions">Versions</h2>
        <table>
          <thead>
            <tr><th scope="col">Version</th><th scope="col">Arch</th><th scope="col">Distribution</th><th scope="col">Status</th><th scope="col">Size</th><th scope="col">Uploaded</th>{sbom && <th scope="col">SBOM</th>}{can(session, 'delete') && <th scope="col"><span className="visually-hidden">Actions</span></th>}</tr>
          </thead>
          <tbody>
            {a.versions.map((v) => (
              <tr key={v.id}>
                <td>{v.version}</td><td>{v.arch}</td><td>{v.distribution}</td><td><StatusBadge status={v.status} /></td><td>{bytes(v.size)}</td>
                <td>{when(v.uploaded_at)}{v.uploaded_by ? ` by ${v.uploaded_by}` : ''}</td>
                {sbom && (
                  <td><a href={`/sbom/${enc(v.name)}/${enc(v.version)}${query({ format: 'cyclonedx', arch: v.arch, distribution: v.distribution })}`} download>CycloneDX</a></td>
                )}
                {can(session, 'delete') && <td><VersionActions version={v} onDeleted={() => { if (a.versions.length === 1) void navigate('/packages'); }} /></td>}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="steps">
        <h2 id="steps">Pipeline of {a.last_validation.version} ({a.last_validation.distribution})</h2>
        <ol className="steps">
          {a.last_validation.steps.map((s) => (
            <li key={s.name}><StatusBadge status={s.status} /> <strong>{label(s.name)}</strong> <span className="muted">{s.message}</span></li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="findings">
        <h2 id="findings">Findings</h2>
        {a.cve_findings.length === 0 ? <p className="muted">No known vulnerabilities.</p> : (
          <table>
            <thead>
              <tr><th scope="col">CVE</th><th scope="col">Version</th><th scope="col">Severity</th><th scope="col" className="num">CVSS</th><th scope="col" className="num">EPSS</th><th scope="col">KEV</th><th scope="col">Component</th><th scope="col">Fix</th></tr>
            </thead>
            <tbody>
              {a.cve_findings.map((f) => (
                <tr key={`${f.version}-${f.distribution}-${f.cve_id}-${f.affected_component}`}>
                  <td title={f.summary}>{f.cve_id}</td><td>{f.version}</td><td><SeverityBadge severity={f.severity} /></td>
                  <td className="num" title={f.cvss_vector ?? undefined}>{f.cvss_score ?? '–'}</td><td className="num">{percent(f.epss)}</td>
                  <td><KevBadge inKev={f.in_kev} /></td><td>{f.affected_component}</td>
                  <td>{label(f.fix_state)}{f.fixed_version ? ` in ${f.fixed_version}` : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {can(session, 'audit') && (
        <section aria-labelledby="decisions">
          <h2 id="decisions">Decision history</h2>
          <DecisionHistory name={a.name} />
        </section>
      )}
      <section aria-labelledby="install">
        <h2 id="install">Install</h2>
        <InstallCommands name={a.name} />
      </section>
    </>
  );
}
