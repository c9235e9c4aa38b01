import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, enc } from '../api';
import { CopyButton, ErrorNotice, Loading, when } from '../components/bits';
import { useSession } from '../session';
import { ROLES, type ApiToken, type Role } from '../types';
import { useDistributions } from './PackagesPage';

interface Created {
  token: string;
  name: string;
  kind: 'api' | 'read';
  message: string;
}

/** Roles whose rights the creator's role holds (src/domain/roles.ts): what a token of theirs may carry. */
const WITHIN: Record<Role, Role[]> = {
  admin: ROLES,
  maintainer: ['maintainer', 'uploader', 'auditor', 'reader'],
  uploader: ['uploader', 'reader'],
  auditor: ['auditor', 'reader'],
  reader: ['reader'],
};
const grantable = (role: Role) => WITHIN[role];

type Kind = 'api' | 'read';

/** The POST /auth/api-tokens body: a read token names its distributions and carries no role. */
export function tokenRequest(form: { name: string; kind: Kind; role: Role; expires: string; distributions: string[] }) {
  const expiry = form.expires ? { expires_days: Number(form.expires) } : {};
  if (form.kind === 'read') return { name: form.name, kind: 'read' as const, distributions: form.distributions, ...expiry };
  return { name: form.name, role: form.role, ...expiry };
}

export function TokensPage() {
  const { session } = useSession();
  const client = useQueryClient();
  const [params] = useSearchParams();
  // ?read=<codename>: the package page's link for a private distribution's install commands.
  const preset = params.get('read');
  const tokens = useQuery({ queryKey: ['api-tokens'], queryFn: () => api<ApiToken[]>('GET', '/auth/api-tokens') });
  const distributions = useDistributions();
  const roles = grantable(session?.role ?? 'reader');
  const [form, setForm] = useState({
    name: '', kind: (preset ? 'read' : 'api') as Kind, role: session?.role ?? 'uploader', expires: '', distributions: preset ? [preset] : [] as string[],
  });
  const [created, setCreated] = useState<Created | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () => api<Created>('POST', '/auth/api-tokens', tokenRequest(form)),
    onSuccess: async (answer) => {
      setCreated(answer);
      setForm({ ...form, name: '', expires: '' });
      await client.invalidateQueries({ queryKey: ['api-tokens'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => api('DELETE', `/auth/api-tokens/${enc(id)}`),
    onSettled: () => client.invalidateQueries({ queryKey: ['api-tokens'] }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated(null);
    if (form.kind === 'read' && form.distributions.length === 0) {
      setProblem('A read token reads at least one distribution: choose one or more.');
      return;
    }
    setProblem(null);
    create.mutate();
  };
  const toggle = (codename: string, on: boolean) =>
    setForm({ ...form, distributions: on ? [...form.distributions, codename] : form.distributions.filter((c) => c !== codename) });

  return (
    <>
      <h1>API tokens</h1>
      <form onSubmit={submit} className="grid-form" aria-labelledby="new-token" noValidate>
        <h2 id="new-token">New token</h2>
        <label htmlFor="tk-name">Name</label>
        <input id="tk-name" required maxLength={100} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        <fieldset>
          <legend>Kind</legend>
          <label className="radio"><input type="radio" name="tk-kind" checked={form.kind === 'api'} onChange={() => setForm({ ...form, kind: 'api' })} /><span>API token: calls the API with a role</span></label>
          <label className="radio"><input type="radio" name="tk-kind" checked={form.kind === 'read'} onChange={() => setForm({ ...form, kind: 'read' })} /><span>Read token (<code>tg_r_</code>): apt or dnf reads the chosen distributions, nothing else</span></label>
        </fieldset>
        {form.kind === 'api' ? (
          <>
            <label htmlFor="tk-role">Role</label>
            <select id="tk-role" value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as Role })}>
              {roles.map((r) => <option key={r} value={r}>{r}</option>)}
            </select>
          </>
        ) : (
          <fieldset>
            <legend>Distributions it reads</legend>
            {distributions.isPending && <Loading what="distributions" />}
            {distributions.data?.map((d) => (
              <label key={d.codename} className="checkbox">
                <input type="checkbox" checked={form.distributions.includes(d.codename)} onChange={(e) => toggle(d.codename, e.target.checked)} />
                <span>{d.codename} <span className="muted">({d.format}{d.private ? ', private' : ''})</span></span>
              </label>
            ))}
          </fieldset>
        )}
        <label htmlFor="tk-expires">Expires after (days, empty for never)</label>
        <input id="tk-expires" type="number" min={1} max={3650} value={form.expires} onChange={(e) => setForm({ ...form, expires: e.target.value })} />
        {problem && <p role="alert" className="notice bad">{problem}</p>}
        <ErrorNotice error={create.error} />
        <button type="submit" disabled={create.isPending}>Create token</button>
      </form>
      {created && (
        <section className="notice good" aria-labelledby="token-once" role="status">
          <h2 id="token-once">Token {created.name}: copy it now</h2>
          <p>{created.message}</p>
          <div className="code-block">
            <pre tabIndex={0}><code data-testid="new-token">{created.token}</code></pre>
            <CopyButton text={created.token} what="the token" />
          </div>
          {created.kind === 'read' && <p>On the machine, <code>export TOLLGATE_TOKEN=…</code> with it before running a package's install commands.</p>}
          <button type="button" className="secondary small" onClick={() => setCreated(null)}>I have stored it</button>
        </section>
      )}
      <h2>Tokens</h2>
      <ErrorNotice error={tokens.error ?? revoke.error} />
      {tokens.isPending ? <Loading what="tokens" /> : (
        <table>
          <thead><tr><th scope="col">Name</th><th scope="col">Owner</th><th scope="col">Role or scope</th><th scope="col">Prefix</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {tokens.data?.map((t) => (
              <tr key={t.token_id}>
                <td>{t.name}</td><td>{t.username}</td>
                <td>{t.kind === 'read' ? `reads ${(t.distributions ?? []).join(', ')}` : t.role}</td>
                <td><code>{t.prefix}</code></td><td>{when(t.created_at)}</td><td>{t.expires_at ? when(t.expires_at) : 'never'}</td><td>{when(t.last_used_at)}</td>
                <td>{t.revoked ? <span className="muted">revoked</span> : <button type="button" className="danger small" onClick={() => revoke.mutate(t.token_id)} aria-label={`Revoke ${t.name}`}>Revoke</button>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
