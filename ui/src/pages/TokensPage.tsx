import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, enc } from '../api';
import { CopyButton, ErrorNotice, Loading, when } from '../components/bits';
import { useSession } from '../session';
import { ROLES, type ApiToken, type Role } from '../types';

interface Created {
  token: string;
  name: string;
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

export function TokensPage() {
  const { session } = useSession();
  const client = useQueryClient();
  const tokens = useQuery({ queryKey: ['api-tokens'], queryFn: () => api<ApiToken[]>('GET', '/auth/api-tokens') });
  const roles = grantable(session?.role ?? 'reader');
  const [form, setForm] = useState({ name: '', role: session?.role ?? 'uploader', expires: '' });
  const [created, setCreated] = useState<Created | null>(null);
  const create = useMutation({
    mutationFn: () => api<Created>('POST', '/auth/api-tokens', { name: form.name, role: form.role, ...(form.expires ? { expires_days: Number(form.expires) } : {}) }),
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
    create.mutate();
  };

  return (
    <>
      <h1>API tokens</h1>
      <form onSubmit={submit} className="grid-form" aria-labelledby="new-token">
        <h2 id="new-token">New token</h2>
        <label htmlFor="tk-name">Name</label>
        <input id="tk-name" required maxLength={100} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        <label htmlFor="tk-role">Role</label>
        <select id="tk-role" value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as Role })}>
          {roles.map((r) => <option key={r} value={r}>{r}</option>)}
        </select>
        <label htmlFor="tk-expires">Expires after (days, empty for never)</label>
        <input id="tk-expires" type="number" min={1} max={3650} value={form.expires} onChange={(e) => setForm({ ...form, expires: e.target.value })} />
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
          <button type="button" className="secondary small" onClick={() => setCreated(null)}>I have stored it</button>
        </section>
      )}
      <h2>Tokens</h2>
      <ErrorNotice error={tokens.error ?? revoke.error} />
      {tokens.isPending ? <Loading what="tokens" /> : (
        <table>
          <thead><tr><th scope="col">Name</th><th scope="col">Owner</th><th scope="col">Role</th><th scope="col">Prefix</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {tokens.data?.map((t) => (
              <tr key={t.token_id}>
                <td>{t.name}</td><td>{t.username}</td><td>{t.role}</td><td><code>{t.prefix}</code></td><td>{when(t.created_at)}</td><td>{t.expires_at ? when(t.expires_at) : 'never'}</td><td>{when(t.last_used_at)}</td>
                <td>{t.revoked ? <span className="muted">revoked</span> : <button type="button" className="danger small" onClick={() => revoke.mutate(t.token_id)} aria-label={`Revoke ${t.name}`}>Revoke</button>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
