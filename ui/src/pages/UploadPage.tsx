import { useState, type DragEvent, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { bytes, ErrorNotice, label, StatusBadge } from '../components/bits';
import { STEPS, streamUpload, type StepState, type UploadResult } from '../upload';
import { useDistributions } from './PackagesPage';

const OUTCOME_TEXT: Record<string, string> = {
  published: 'Published: the package is in the signed index.',
  pending_review: 'Held for review: a reviewer must decide before it is published.',
  quarantined: 'Quarantined: the package is not published.',
  rejected: 'Rejected: the package is not published.',
};

export function UploadPage() {
  const client = useQueryClient();
  const distributions = useDistributions();
  const [file, setFile] = useState<File | null>(null);
  const [distribution, setDistribution] = useState('');
  const [dragging, setDragging] = useState(false);
  const [steps, setSteps] = useState<Record<string, StepState>>({});
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<UploadResult | null>(null);
  const [error, setError] = useState<unknown>(null);

  const accepted = (f: File | undefined) => {
    if (!f) return;
    setFile(f);
    setResult(null);
    setError(null);
    const rpm = f.name.endsWith('.rpm');
    const fitting = distributions.data?.find((d) => d.format === (rpm ? 'rpm' : 'deb'));
    if (fitting && !distributions.data?.some((d) => d.codename === distribution && d.format === fitting.format)) setDistribution(fitting.codename);
  };
  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    accepted(event.dataTransfer.files[0]);
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!file || !distribution) return;
    setRunning(true);
    setResult(null);
    setError(null);
    setSteps(Object.fromEntries(STEPS.map((s) => [s, { state: 'waiting' }])));
    try {
      const answer = await streamUpload(file, distribution, (step, state) => setSteps((prev) => ({ ...prev, [step]: state })));
      setResult(answer);
      await client.invalidateQueries();
    } catch (e) {
      setError(e);
    } finally {
      setRunning(false);
    }
  };

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
          <p>Drop a <code>.deb</code> or <code>.rpm</code> here, or</p>
          <label htmlFor="upload-file" className="button secondary">Choose a file</label>
          <input id="upload-file" className="visually-hidden" type="file" accept=".deb,.rpm" onChange={(e) => accepted(e.target.files?.[0])} />
          {file && <p aria-live="polite"><strong>{file.name}</strong> ({bytes(file.size)})</p>}
        </div>
        <label htmlFor="upload-dist">Distribution</label>
        <select id="upload-dist" required value={distribution} onChange={(e) => setDistribution(e.target.value)}>
          <option value="">Choose…</option>
          {distributions.data?.map((d) => <option key={d.codename} value={d.codename}>{d.codename} ({d.format})</option>)}
        </select>
        <button type="submit" disabled={!file || !distribution || running}>{running ? 'Uploading…' : 'Upload'}</button>
      </form>
      {Object.keys(steps).length > 0 && (
        <section aria-labelledby="pipeline">
          <h2 id="pipeline">Pipeline</h2>
          <ol className="steps" aria-live="polite">
            {STEPS.map((name) => {
              const s = steps[name] ?? { state: 'waiting' };
              return (
                <li key={name} data-step={name} data-state={s.state}>
                  {s.state === 'finished' ? <StatusBadge status={s.status ?? 'passed'} /> : <span className="badge tone-neutral">{s.state === 'started' ? 'running' : 'waiting'}</span>}
                  {' '}<strong>{label(name)}</strong> <span className="muted">{s.message}</span>
                </li>
              );
            })}
          </ol>
        </section>
      )}
      <ErrorNotice error={error} />
      {result && (
        <section aria-labelledby="outcome" className="outcome" role="status">
          <h2 id="outcome">Result: <StatusBadge status={result.status} /></h2>
          <p>{OUTCOME_TEXT[result.status] ?? result.detail}</p>
          {result.reasons && result.reasons.length > 0 && <ul>{result.reasons.map((r) => <li key={r}>{r}</li>)}</ul>}
          {result.name && <p><Link to={`/packages/${encodeURIComponent(result.name)}`}>Open {result.name} {result.version}</Link></p>}
        </section>
      )}
    </>
  );
}
