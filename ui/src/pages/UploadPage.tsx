import { useState, type DragEvent, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { bytes, ErrorNotice, label, StatusBadge } from '../components/bits';
import { STEPS, streamUpload, type StepState, type UploadResult } from '../upload';
import { planUploads, type UploadPlan } from '../upload-plan';
import { useDistributions } from './PackagesPage';

const OUTCOME_TEXT: Record<string, string> = {
  published: 'Published: the package is in the signed index.',
  pending_review: 'Held for review: a reviewer must decide before it is published.',
  quarantined: 'Quarantined: the package is not published.',
  rejected: 'Rejected: the package is not published.',
};

/** Uploads of a set sent side by side (as the CLI's default `--jobs`). */
const UPLOADS_AT_ONCE = 4;

/** One upload of the set as it runs: its pipeline steps live, then the service's answer. */
interface Run {
  title: string;
  steps: Record<string, StepState>;
  result?: UploadResult;
  error?: unknown;
}

function RunView({ run, index, several }: { run: Run; index: number; several: boolean }) {
  const id = `pipeline-${index}`;
  return (
    <section aria-labelledby={id} className="upload-run">
      <h2 id={id}>{several ? `Pipeline of ${run.title}` : 'Pipeline'}</h2>
      <ol className="steps" aria-live="polite">
        {STEPS.map((name) => {
          const s = run.steps[name] ?? { state: 'waiting' };
          return (
            <li key={name} data-step={name} data-state={s.state}>
              {s.state === 'finished' ? <StatusBadge status={s.status ?? 'passed'} /> : <span className="badge tone-neutral">{s.state === 'started' ? 'running' : 'waiting'}</span>}
              {' '}<strong>{label(name)}</strong> <span className="muted">{s.message}</span>
            </li>
          );
        })}
      </ol>
      <ErrorNotice error={run.error} />
      {run.result && (
        <div className="outcome" role="status">
          <h3>Result: <StatusBadge status={run.result.status} /></h3>
          <p>{OUTCOME_TEXT[run.result.status] ?? run.result.detail}</p>
          {run.result.reasons && run.result.reasons.length > 0 && <ul>{run.result.reasons.map((r) => <li key={r}>{r}</li>)}</ul>}
          {run.result.name && <p><Link to={`/packages/${encodeURIComponent(run.result.name)}`}>Open {run.result.name} {run.result.version}</Link></p>}
        </div>
      )}
    </section>
  );
}

export function UploadPage() {
  const client = useQueryClient();
  const distributions = useDistributions();
  const [plan, setPlan] = useState<UploadPlan<File> | null>(null);
  const [distribution, setDistribution] = useState('');
  const [dragging, setDragging] = useState(false);
  const [runs, setRuns] = useState<Run[]>([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const accepted = async (list: FileList | null | undefined) => {
    const files = [...(list ?? [])];
    if (files.length === 0) return;
    setRuns([]);
    setError(null);
    try {
      const next = await planUploads(files);
      setPlan(next);
      const rpm = next.uploads.some((u) => u.main.name.endsWith('.rpm'));
      const fitting = distributions.data?.find((d) => d.format === (rpm ? 'rpm' : 'deb'));
      if (fitting && !distributions.data?.some((d) => d.codename === distribution && d.format === fitting.format)) setDistribution(fitting.codename);
    } catch (e) {
      setError(e);
    }
  };
  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    void accepted(event.dataTransfer.files);
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!plan || plan.uploads.length === 0 || !distribution) return;
    setRunning(true);
    setError(null);
    const waiting = () => Object.fromEntries(STEPS.map((s) => [s, { state: 'waiting' } as StepState]));
    setRuns(plan.uploads.map((u) => ({ title: u.main.name, steps: waiting() })));
    const update = (i: number, change: (run: Run) => Run) => setRuns((prev) => prev.map((r, j) => (j === i ? change(r) : r)));
    // A few at a time, taken in order: the service answers each once the signed index lists it,
    // and uploads under way together share one publish. Each shows its own steps as they run, and
    // a refusal stops nothing else.
    let next = 0;
    const sendNext = async (): Promise<void> => {
      for (let i = next++; i < plan.uploads.length; i = next++) {
        const upload = plan.uploads[i]!;
        try {
          const result = await streamUpload(upload.main, distribution, (step, state) => update(i, (r) => ({ ...r, steps: { ...r.steps, [step]: state } })), upload.files);
          update(i, (r) => ({ ...r, result }));
        } catch (e) {
          update(i, (r) => ({ ...r, error: e }));
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(UPLOADS_AT_ONCE, plan.uploads.length) }, sendNext));
    setRunning(false);
    await client.invalidateQueries();
  };
  const total = plan ? plan.uploads.reduce((n, u) => n + 1 + u.files.length, 0) : 0;

  return (
    <>
      <h1>Upload a package</h1>
      <form onSubmit={submit} className="upload-form">
        <div
          className={`dropzone${dragging ? ' dragging' : ''}`}
          onDragOver={(e) => { e.preventDefault(); setDragging(true); }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
        >
          <p>Drop <code>.deb</code> or <code>.rpm</code> files here, or a source package: its <code>.dsc</code> (or <code>.changes</code>) with the files it names. Or</p>
          <label htmlFor="upload-file" className="button secondary">Choose files</label>
          <input id="upload-file" className="visually-hidden" type="file" multiple onChange={(e) => void accepted(e.target.files)} />
          {plan && (
            <div aria-live="polite">
              <p>{plan.uploads.length === 1 ? '1 upload' : `${plan.uploads.length} uploads`} of {total} {total === 1 ? 'file' : 'files'}:</p>
              <ul className="upload-plan">
                {plan.uploads.map((u) => (
                  <li key={u.main.name}>
                    <strong>{u.main.name}</strong> ({bytes(u.main.size)}){u.files.length > 0 && <> with {u.files.map((f) => f.name).join(', ')}</>}
                  </li>
                ))}
              </ul>
              {plan.missing.length > 0 && <p className="notice bad" role="alert">Named but not chosen (the service will refuse that upload): {plan.missing.join(', ')}</p>}
              {plan.unclaimed.length > 0 && <p className="notice" role="alert">Not sent (neither a package nor named by a .dsc or .changes): {plan.unclaimed.map((f) => f.name).join(', ')}</p>}
            </div>
          )}
        </div>
        <label htmlFor="upload-dist">Distribution</label>
        <select id="upload-dist" required value={distribution} onChange={(e) => setDistribution(e.target.value)}>
          <option value="">Choose…</option>
          {distributions.data?.map((d) => <option key={d.codename} value={d.codename}>{d.codename} ({d.format})</option>)}
        </select>
        <button type="submit" disabled={!plan || plan.uploads.length === 0 || !distribution || running}>{running ? 'Uploading…' : 'Upload'}</button>
      </form>
      <ErrorNotice error={error} />
      {runs.map((run, i) => <RunView key={`${i}-${run.title}`} run={run} index={i} several={runs.length > 1} />)}
    </>
  );
}
