import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { ErrorNotice, Loading, when } from '../components/bits';

type Settings = Record<string, unknown>;
type Field = { key: string; text: string; kind: 'text' | 'number' | 'boolean' | 'secret' };

const SECTIONS: Array<{ id: string; title: string; fields: Field[]; test?: { path: string; text: string } }> = [
  {
    id: 'ldap', title: 'Directory (LDAP)', test: { path: '/settings/test-ldap', text: 'Test LDAP' },
    fields: [
      { key: 'ldap_enabled', text: 'Enabled', kind: 'boolean' }, { key: 'ldap_url', text: 'URL', kind: 'text' },
      { key: 'ldap_starttls', text: 'STARTTLS', kind: 'boolean' }, { key: 'ldap_verify_cert', text: 'Verify certificate', kind: 'boolean' },
      { key: 'ldap_bind_dn', text: 'Bind DN', kind: 'text' }, { key: 'ldap_bind_password', text: 'Bind password', kind: 'secret' },
      { key: 'ldap_base_dn', text: 'Base DN', kind: 'text' }, { key: 'ldap_user_attribute', text: 'User attribute', kind: 'text' },
      { key: 'group_admin', text: 'Admin group', kind: 'text' }, { key: 'group_maintainer', text: 'Maintainer group', kind: 'text' },
      { key: 'group_uploader', text: 'Uploader group', kind: 'text' }, { key: 'group_auditor', text: 'Auditor group', kind: 'text' },
      { key: 'group_reader', text: 'Reader group', kind: 'text' },
    ],
  },
  {
    id: 'smtp', title: 'E-mail (SMTP)', test: { path: '/settings/test-email', text: 'Send a test e-mail' },
    fields: [
      { key: 'smtp_host', text: 'Host', kind: 'text' }, { key: 'smtp_port', text: 'Port', kind: 'number' },
      { key: 'smtp_tls', text: 'TLS', kind: 'boolean' }, { key: 'smtp_user', text: 'User', kind: 'text' },
      { key: 'smtp_password', text: 'Password', kind: 'secret' }, { key: 'smtp_from', text: 'From', kind: 'text' },
    ],
  },
  {
    id: 'webhook', title: 'Webhook', test: { path: '/settings/test-webhook', text: 'Test the webhook' },
    fields: [
      { key: 'webhook_enabled', text: 'Enabled', kind: 'boolean' }, { key: 'webhook_url', text: 'URL', kind: 'text' },
      { key: 'webhook_secret', text: 'Secret', kind: 'secret' },
    ],
  },
  {
    id: 'schedules', title: 'Schedules (UTC) and retention',
    fields: [
      { key: 'schedule_security_sync', text: 'Security data sync', kind: 'text' }, { key: 'schedule_retention', text: 'Retention', kind: 'text' },
      { key: 'schedule_sla_check', text: 'SLA check', kind: 'text' }, { key: 'retention_days', text: 'Audit retention (days)', kind: 'number' },
    ],
  },
];

const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
const POLICY_ACTIONS = ['block', 'review', 'warn', 'allow'];

function useSaver() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (changes: Settings) => api<Settings & { cleared_secrets?: string[] }>('PATCH', '/settings', changes),
    onSuccess: (answer) => client.setQueryData(['settings'], answer),
  });
}

function SectionForm({ section, settings }: { section: (typeof SECTIONS)[number]; settings: Settings }) {
  const [values, setValues] = useState<Settings>(() => Object.fromEntries(section.fields.map((f) => [f.key, settings[f.key]])));
  const save = useSaver();
  const test = useMutation({ mutationFn: () => api<Record<string, unknown>>('POST', section.test!.path) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const changes = Object.fromEntries(section.fields.map((f) => {
      const v = values[f.key];
      if (f.kind === 'number') return [f.key, v === '' || v === null ? null : Number(v)];
      if (f.kind === 'text') return [f.key, v === '' ? null : v];
      return [f.key, v];
    }).filter(([key, v]) => v !== settings[key as string]));
    save.mutate(changes);
  };
  return (
    <form onSubmit={submit} className="grid-form" aria-labelledby={`sec-${section.id}`}>
      <h2 id={`sec-${section.id}`}>{section.title}</h2>
      {section.fields.map((f) => {
        const id = `set-${f.key}`;
        const value = values[f.key];
        if (f.kind === 'boolean') {
          return (
            <label key={f.key} className="checkbox" htmlFor={id}>
              <input id={id} type="checkbox" checked={Boolean(value)} onChange={(e) => setValues({ ...values, [f.key]: e.target.checked })} /> {f.text}
            </label>
          );
        }
        return (
          <div key={f.key} className="field">
            <label htmlFor={id}>{f.text}</label>
            <input id={id} type={f.kind === 'secret' ? 'password' : f.kind === 'number' ? 'number' : 'text'} autoComplete="off" value={value === null || value === undefined ? '' : String(value)} onChange={(e) => setValues({ ...values, [f.key]: e.target.value })} />
          </div>
        );
      })}
      <ErrorNotice error={save.error ?? test.error} />
      {save.isSuccess && <p role="status" className="notice good">Saved.{save.data.cleared_secrets?.length ? ` Cleared because their destination changed: ${save.data.cleared_secrets.join(', ')}.` : ''}</p>}
      {test.data && <p role="status" className={`notice ${test.data.ok ? 'good' : 'bad'}`}>{test.data.ok ? 'The test passed.' : `The test failed: ${String(test.data.error ?? test.data.detail ?? 'no detail')}`}</p>}
      <div className="actions">
        <button type="submit" disabled={save.isPending}>Save</button>
        {section.test && <button type="button" className="secondary" onClick={() => test.mutate()} disabled={test.isPending}>{section.test.text}</button>}
      </div>
    </form>
  );
}

function PolicyForm({ settings }: { settings: Settings }) {
  const [policy, setPolicy] = useState(settings.cve_policy as Record<string, string>);
  const [sla, setSla] = useState(settings.sla_days as Record<string, number>);
  const save = useSaver();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ cve_policy: policy, sla_days: sla });
  };
  return (
    <form onSubmit={submit} aria-labelledby="sec-policy">
      <h2 id="sec-policy">CVE policy</h2>
      <table>
        <thead><tr><th scope="col">Severity</th><th scope="col">Action</th><th scope="col">Review SLA (days)</th></tr></thead>
        <tbody>
          {SEVERITIES.map((sev) => (
            <tr key={sev}>
              <td><span className={`badge sev-${sev}`}>{sev}</span></td>
              <td>
                <select aria-label={`Action for ${sev}`} value={policy[sev]} onChange={(e) => setPolicy({ ...policy, [sev]: e.target.value })}>
                  {POLICY_ACTIONS.map((a) => <option key={a}>{a}</option>)}
                </select>
              </td>
              <td><input aria-label={`SLA days for ${sev}`} type="number" min={1} value={sla[sev] ?? ''} onChange={(e) => setSla({ ...sla, [sev]: Number(e.target.value) })} /></td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorNotice error={save.error} />
      {save.isSuccess && <p role="status" className="notice good">Policy saved.</p>}
      <button type="submit" disabled={save.isPending}>Save policy</button>
    </form>
  );
}

const LIMITS = ['login', 'password_reset', 'mfa_verify', 'change_password', 'upload', 'import_fetch', 'import_batch', 'import_sync', 'import', 'distributions'];

/** Per-limit requests a minute; an empty field keeps the built-in value, 0 turns the limit off. */
function RateLimitsForm({ settings }: { settings: Settings }) {
  const current = (settings.rate_limits ?? {}) as Record<string, number>;
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(LIMITS.map((l) => [l, current[l] === undefined ? '' : String(current[l])])));
  const save = useSaver();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ rate_limits: Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, Number(v)])) });
  };
  return (
    <form onSubmit={submit} aria-labelledby="sec-limits">
      <h2 id="sec-limits">Rate limits (requests a minute)</h2>
      <p className="muted">Empty: the built-in limit. 0: no limit.</p>
      <table>
        <thead><tr><th scope="col">Limit</th><th scope="col">Requests a minute</th></tr></thead>
        <tbody>
          {LIMITS.map((l) => (
            <tr key={l}>
              <td><label htmlFor={`limit-${l}`}>{l.replace(/_/g, ' ')}</label></td>
              <td><input id={`limit-${l}`} type="number" min={0} value={values[l]} onChange={(e) => setValues({ ...values, [l]: e.target.value })} /></td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorNotice error={save.error} />
      {save.isSuccess && <p role="status" className="notice good">Rate limits saved.</p>}
      <button type="submit" disabled={save.isPending}>Save rate limits</button>
    </form>
  );
}

interface KeyInfo {
  fingerprint: string;
  uids: string[];
  algorithm: string;
  created: string;
  expires: string | null;
}

function SigningKey() {
  const client = useQueryClient();
  const key = useQuery({ queryKey: ['gpg'], queryFn: () => api<KeyInfo>('GET', '/settings/gpg') });
  const [form, setForm] = useState({ name: '', email: '' });
  const generate = useMutation({
    mutationFn: () => api<KeyInfo>('POST', '/settings/gpg/generate', form),
    onSuccess: (answer) => client.setQueryData(['gpg'], answer),
  });
  return (
    <section aria-labelledby="sec-key">
      <h2 id="sec-key">Repository signing key</h2>
      {key.isPending ? <Loading what="the key" /> : key.data && (
        <dl className="facts">
          <dt>Fingerprint</dt><dd><code>{key.data.fingerprint}</code></dd>
          <dt>User IDs</dt><dd>{key.data.uids.join(', ')}</dd>
          <dt>Algorithm</dt><dd>{key.data.algorithm}</dd>
          <dt>Created</dt><dd>{when(key.data.created)}</dd>
          <dt>Expires</dt><dd>{key.data.expires ? when(key.data.expires) : 'never'}</dd>
        </dl>
      )}
      <ErrorNotice error={key.error} />
      <form className="grid-form" onSubmit={(e) => { e.preventDefault(); generate.mutate(); }} aria-label="Generate a new signing key">
        <label htmlFor="key-name">Real name</label>
        <input id="key-name" required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        <label htmlFor="key-email">E-mail</label>
        <input id="key-email" type="email" required value={form.email} onChange={(e) => setForm({ ...form, email: e.target.value })} />
        <ErrorNotice error={generate.error} />
        <button type="submit" disabled={generate.isPending}>{generate.isPending ? 'Generating…' : 'Generate a new key'}</button>
      </form>
    </section>
  );
}

export function SettingsPage() {
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => api<Settings>('GET', '/settings/') });
  if (settings.isPending) return <Loading what="settings" />;
  if (settings.error) return <ErrorNotice error={settings.error} />;
  return (
    <>
      <h1>Settings</h1>
      <PolicyForm settings={settings.data} />
      <SigningKey />
      {SECTIONS.map((section) => <SectionForm key={section.id} section={section} settings={settings.data} />)}
      <RateLimitsForm settings={settings.data} />
    </>
  );
}
