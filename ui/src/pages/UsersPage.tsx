import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, enc } from '../api';
import { ErrorNotice, Loading, when } from '../components/bits';
import { useSession } from '../session';
import { ROLES, type Role, type User } from '../types';

function CreateUserForm() {
  const client = useQueryClient();
  const [form, setForm] = useState({ username: '', email: '', full_name: '', role: 'reader' as Role, password: '' });
  const create = useMutation({
    mutationFn: () => api<User>('POST', '/auth/users', { ...form, email: form.email || null, full_name: form.full_name || null }),
    onSuccess: async () => {
      setForm({ username: '', email: '', full_name: '', role: 'reader', password: '' });
      await client.invalidateQueries({ queryKey: ['users'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit} className="grid-form" aria-labelledby="new-user">
      <h2 id="new-user">New user</h2>
      <label htmlFor="nu-username">Username</label>
      <input id="nu-username" required value={form.username} onChange={(e) => setForm({ ...form, username: e.target.value })} />
      <label htmlFor="nu-fullname">Full name</label>
      <input id="nu-fullname" value={form.full_name} onChange={(e) => setForm({ ...form, full_name: e.target.value })} />
      <label htmlFor="nu-email">E-mail</label>
      <input id="nu-email" type="email" value={form.email} onChange={(e) => setForm({ ...form, email: e.target.value })} />
      <label htmlFor="nu-role">Role</label>
      <select id="nu-role" value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as Role })}>
        {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
      </select>
      <label htmlFor="nu-password">Initial password</label>
      <input id="nu-password" type="password" autoComplete="new-password" required aria-describedby="nu-password-rule" value={form.password} onChange={(e) => setForm({ ...form, password: e.target.value })} />
      <p id="nu-password-rule" className="muted">At least 8 characters, one upper-case letter, one digit or symbol.</p>
      <ErrorNotice error={create.error} />
      {create.isSuccess && <p role="status" className="notice good">User {create.data.username} created.</p>}
      <button type="submit" disabled={create.isPending}>Create user</button>
    </form>
  );
}

export function UsersPage() {
  const { session } = useSession();
  const client = useQueryClient();
  const users = useQuery({ queryKey: ['users'], queryFn: () => api<User[]>('GET', '/auth/users') });
  const remove = useMutation({
    mutationFn: (username: string) => api('DELETE', `/auth/users/${enc(username)}`),
    onSettled: () => client.invalidateQueries({ queryKey: ['users'] }),
  });
  const reset = useMutation({
    mutationFn: ({ username, password }: { username: string; password: string }) => api('POST', `/auth/users/${enc(username)}/reset-password`, { new_password: password }),
  });
  const askReset = (username: string) => {
    const password = window.prompt(`New password for ${username} (8+ characters, an upper-case letter, a digit or symbol)`);
    if (password) reset.mutate({ username, password });
  };
  const update = useMutation({
    mutationFn: ({ username, change }: { username: string; change: Partial<Pick<User, 'role' | 'active'>> }) => api('PATCH', `/auth/users/${enc(username)}`, change),
    onSettled: () => client.invalidateQueries({ queryKey: ['users'] }),
  });
  return (
    <>
      <h1>Users</h1>
      <ErrorNotice error={users.error ?? update.error ?? remove.error ?? reset.error} />
      {reset.isSuccess && <p role="status" className="notice good">Password of {reset.variables.username} reset; their sessions are ended.</p>}
      {users.isPending ? <Loading what="users" /> : (
        <table>
          <thead>
            <tr><th scope="col">Username</th><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Source</th><th scope="col">MFA</th><th scope="col">Last login</th><th scope="col">Active</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {users.data?.map((u) => {
              const self = u.username === session?.user.username;
              return (
                <tr key={u.username}>
                  <td>{u.username}</td><td>{u.full_name ?? '–'}</td><td>{u.email ?? '–'}</td>
                  <td>
                    {self ? u.role : (
                      <select aria-label={`Role of ${u.username}`} value={u.role} onChange={(e) => update.mutate({ username: u.username, change: { role: e.target.value as Role } })}>
                        {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
                      </select>
                    )}
                  </td>
                  <td>{u.source}</td><td>{u.mfa_enabled ? 'on' : 'off'}</td><td>{when(u.last_login)}</td>
                  <td>
                    <input type="checkbox" aria-label={`${u.username} active`} checked={u.active} disabled={self} onChange={(e) => update.mutate({ username: u.username, change: { active: e.target.checked } })} />
                  </td>
                  <td>
                    {!self && (
                      <span className="row-actions">
                        {u.source === 'local' && <button type="button" className="secondary small" onClick={() => askReset(u.username)} aria-label={`Reset password of ${u.username}`}>Reset password</button>}
                        <button type="button" className="danger small" onClick={() => { if (window.confirm(`Delete the account ${u.username}?`)) remove.mutate(u.username); }} aria-label={`Delete ${u.username}`}>Delete</button>
                      </span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <CreateUserForm />
    </>
  );
}
