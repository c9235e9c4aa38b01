import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, enc, query } from '../api';
import { ACTIONS, checkDecision, type DecisionAction, type DecisionForm } from '../decide';
import { Dialog, ErrorNotice } from './bits';

export interface DecideTarget {
  name: string;
  version: string;
  arch: string;
  distribution: string;
}

const EMPTY: DecisionForm = { action: 'accept_risk', justification: '', expiryDays: '', targetVersion: '' };

export function DecideDialog({ target, onClose }: { target: DecideTarget | null; onClose: () => void }) {
  const client = useQueryClient();
  const [form, setForm] = useState<DecisionForm>(EMPTY);
  const [shown, setShown] = useState<Partial<Record<keyof DecisionForm, string>>>({});
  const decide = useMutation({
    mutationFn: (body: object) =>
      api('POST', `/security/packages/${enc(target!.name)}/${enc(target!.version)}/decide${query({ arch: target!.arch, distribution: target!.distribution })}`, body),
    onSuccess: async () => {
      await client.invalidateQueries();
      close();
    },
  });
  const close = () => {
    setForm(EMPTY);
    setShown({});
    decide.reset();
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!target) return;
    const { problems, body } = checkDecision(form);
    setShown(problems);
    if (body) decide.mutate(body);
  };
  const field = (key: keyof DecisionForm) => (shown[key] ? { 'aria-invalid': true, 'aria-describedby': `${key}-problem` } : {});
  const problem = (key: keyof DecisionForm) => shown[key] && <p id={`${key}-problem`} className="field-problem">{shown[key]}</p>;

  return (
    <Dialog title={target ? `Decide on ${target.name} ${target.version}` : 'Decide'} open={target !== null} onClose={close}>
      {target && (
        <form onSubmit={submit} noValidate>
          <p className="muted">{target.arch}, {target.distribution}</p>
          <fieldset>
            <legend>Decision</legend>
            {ACTIONS.map((a) => (
              <label key={a.value} className="radio">
                <input type="radio" name="action" value={a.value} checked={form.action === a.value} onChange={() => setForm({ ...form, action: a.value as DecisionAction })} />
                {a.text}
              </label>
            ))}
          </fieldset>
          <label htmlFor="justification">Justification (required)</label>
          <textarea id="justification" rows={4} value={form.justification} onChange={(e) => setForm({ ...form, justification: e.target.value })} {...field('justification')} />
          {problem('justification')}
          {(form.action === 'accept_risk' || form.action === 'exception') && (
            <>
              <label htmlFor="expiry">Expires after (days){form.action === 'exception' ? ', required' : ', optional'}</label>
              <input id="expiry" inputMode="numeric" value={form.expiryDays} onChange={(e) => setForm({ ...form, expiryDays: e.target.value })} {...field('expiryDays')} />
              {problem('expiryDays')}
            </>
          )}
          {form.action === 'upgrade_required' && (
            <>
              <label htmlFor="target-version">Target version (required)</label>
              <input id="target-version" value={form.targetVersion} onChange={(e) => setForm({ ...form, targetVersion: e.target.value })} {...field('targetVersion')} />
              {problem('targetVersion')}
            </>
          )}
          <ErrorNotice error={decide.error} />
          <div className="actions">
            <button type="submit" disabled={decide.isPending}>Record decision</button>
            <button type="button" className="secondary" onClick={close}>Cancel</button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
