import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, enc } from '../api';
import { Dialog, ErrorNotice } from '../components/bits';
import type { Distribution } from '../types';

/** The architectures the service knows (src/domain/distribution-spec.ts), offered as choices. */
export const KNOWN_ARCHITECTURES = {
  deb: ['amd64', 'arm64', 'i386', 'armhf', 'armel', 'ppc64el', 's390x', 'riscv64', 'mips64el', 'loong64'],
  rpm: ['x86_64', 'aarch64', 'ppc64le', 's390x', 'i686', 'armv7hl', 'riscv64'],
} as const;

export interface DistributionForm {
  codename: string;
  format: 'deb' | 'rpm';
  description: string;
  architectures: string[];
  components: string;
  private: boolean;
}

export const emptyForm = (): DistributionForm => ({ codename: '', format: 'deb', description: '', architectures: ['amd64'], components: 'main', private: false });

export const formOf = (d: Distribution): DistributionForm => ({
  codename: d.codename, format: d.format, description: d.description, architectures: [...d.index_architectures], components: d.components.join(' '), private: d.private,
});

/**
 * The POST /distributions (create) or PATCH (change) body: the definition as data. Components
 * are APT's only; codename and format are fixed once created.
 */
export function distributionBody(form: DistributionForm, creating: boolean): Record<string, unknown> {
  const components = form.components.split(/[\s,]+/).filter(Boolean);
  return {
    ...(creating ? { codename: form.codename.trim(), format: form.format } : {}),
    ...(form.description.trim() ? { description: form.description.trim() } : {}),
    architectures: form.architectures,
    ...(form.format === 'deb' && components.length ? { components } : {}),
    private: form.private,
  };
}

/** Field problems of a 422 (`errors: [{loc, msg}]`) by the field they name. */
function fieldProblems(error: unknown): string[] {
  if (!(error instanceof ApiError) || !Array.isArray(error.body.errors)) return [];
  return (error.body.errors as Array<{ loc?: unknown[]; msg?: string }>).map((e) => `${(e.loc ?? []).slice(1).join('.')}: ${e.msg ?? ''}`);
}

function Fields({ form, setForm, creating }: { form: DistributionForm; setForm: (f: DistributionForm) => void; creating: boolean }) {
  const id = creating ? 'new-dist' : 'edit-dist';
  const toggle = (arch: string, on: boolean) => setForm({ ...form, architectures: on ? [...form.architectures, arch] : form.architectures.filter((a) => a !== arch) });
  return (
    <>
      {creating && (
        <>
          <label htmlFor={`${id}-codename`}>Codename</label>
          <input id={`${id}-codename`} required maxLength={50} pattern="[a-z0-9][a-z0-9.+\-]*" value={form.codename} onChange={(e) => setForm({ ...form, codename: e.target.value })} />
          <label htmlFor={`${id}-format`}>Format</label>
          <select id={`${id}-format`} value={form.format} onChange={(e) => {
            const format = e.target.value as 'deb' | 'rpm';
            setForm({ ...form, format, architectures: [KNOWN_ARCHITECTURES[format][0]] });
          }}>
            <option value="deb">deb (APT)</option>
            <option value="rpm">rpm (dnf)</option>
          </select>
        </>
      )}
      <label htmlFor={`${id}-description`}>Description</label>
      <input id={`${id}-description`} maxLength={200} value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />
      <fieldset>
        <legend>Architectures of the index</legend>
        {KNOWN_ARCHITECTURES[form.format].map((arch) => (
          <label key={arch} className="checkbox">
            <input type="checkbox" checked={form.architectures.includes(arch)} onChange={(e) => toggle(arch, e.target.checked)} /><span>{arch}</span>
          </label>
        ))}
      </fieldset>
      {form.format === 'deb' && (
        <>
          <label htmlFor={`${id}-components`}>Components (separated by spaces; the first takes uploads by default)</label>
          <input id={`${id}-components`} value={form.components} onChange={(e) => setForm({ ...form, components: e.target.value })} />
        </>
      )}
      <label className="checkbox">
        <input type="checkbox" checked={form.private} onChange={(e) => setForm({ ...form, private: e.target.checked })} /><span>Private: reading its files under /repo/ needs an API token or a read token</span>
      </label>
    </>
  );
}

/** Admins: a new distribution, created and published empty at once. */
export function CreateDistribution() {
  const client = useQueryClient();
  const [form, setForm] = useState(emptyForm);
  const create = useMutation({
    mutationFn: () => api<Distribution>('POST', '/distributions', distributionBody(form, true)),
    onSuccess: async () => {
      setForm(emptyForm());
      await client.invalidateQueries({ queryKey: ['distributions'] });
    },
  });
  const submit = (e: FormEvent) => { e.preventDefault(); create.mutate(); };
  return (
    <form onSubmit={submit} className="grid-form" aria-labelledby="new-dist">
      <h2 id="new-dist">New distribution</h2>
      <Fields form={form} setForm={setForm} creating />
      <ErrorNotice error={create.error} />
      {fieldProblems(create.error).length > 0 && <ul className="field-problem">{fieldProblems(create.error).map((p) => <li key={p}>{p}</li>)}</ul>}
      {create.data && <p role="status">Created {create.data.codename}: its empty index is signed and published.</p>}
      <button type="submit" disabled={create.isPending || form.architectures.length === 0}>Create distribution</button>
    </form>
  );
}

/** Admins: change one distribution's definition in a dialog; the service refuses a change that would strand packages. */
export function EditDistribution({ distribution, onClose }: { distribution: Distribution; onClose: () => void }) {
  const client = useQueryClient();
  const [form, setForm] = useState(() => formOf(distribution));
  const save = useMutation({
    mutationFn: () => api<Distribution>('PATCH', `/distributions/${enc(distribution.codename)}`, distributionBody(form, false)),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['distributions'] });
      onClose();
    },
  });
  const submit = (e: FormEvent) => { e.preventDefault(); save.mutate(); };
  return (
    <Dialog title={`Edit ${distribution.codename}`} open onClose={onClose}>
      <form onSubmit={submit}>
        <Fields form={form} setForm={setForm} creating={false} />
        <ErrorNotice error={save.error} />
        {fieldProblems(save.error).length > 0 && <ul className="field-problem">{fieldProblems(save.error).map((p) => <li key={p}>{p}</li>)}</ul>}
        <div className="actions">
          <button type="submit" disabled={save.isPending || form.architectures.length === 0}>Save</button>
          <button type="button" className="secondary" onClick={onClose}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}
