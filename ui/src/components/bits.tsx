import { useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiError } from '../api';

const STATUS_TONE: Record<string, string> = {
  published: 'good', accepted_risk: 'warn', exception: 'warn', pending_review: 'attention',
  upgrade_required: 'attention', quarantined: 'bad', rejected: 'bad',
  passed: 'good', skipped: 'neutral', warning: 'warn', failed: 'bad', started: 'neutral',
  SUCCESS: 'good', FAILURE: 'bad', WARNING: 'warn',
  success: 'good', synced: 'good', completed: 'good', unchanged: 'good', syncing: 'neutral', reading: 'neutral', verified: 'neutral',
  ok: 'good', failing: 'bad', not_configured: 'neutral', degraded: 'bad',
};

export const label = (value: string) => value.replace(/_/g, ' ');

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge tone-${STATUS_TONE[status] ?? 'neutral'}`}>{label(status)}</span>;
}

export function SeverityBadge({ severity }: { severity: string | null }) {
  if (!severity) return <span className="muted">none</span>;
  return <span className={`badge sev-${severity}`}>{severity}</span>;
}

export function KevBadge({ inKev }: { inKev: boolean | null }) {
  if (inKev === null) return <span className="muted" title="KEV data unavailable">?</span>;
  return inKev ? <span className="badge sev-critical" title="In CISA's Known Exploited Vulnerabilities catalog">KEV</span> : <span className="muted">no</span>;
}

export const percent = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(value < 0.01 ? 2 : 1)}%`);
export const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '–');
export const bytes = (size: number) => (size < 1024 ? `${size} B` : size < 1048576 ? `${(size / 1024).toFixed(1)} KiB` : `${(size / 1048576).toFixed(1)} MiB`);

/** An error from the service, said plainly; a 403 says it is the role, not a fault. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  if (error instanceof ApiError && error.status === 403) {
    return <p role="alert" className="notice bad">Your role does not allow this ({error.message}).</p>;
  }
  const text = error instanceof Error ? error.message : String(error);
  return <p role="alert" className="notice bad">{text}{error instanceof ApiError ? ` (${error.code})` : ''}</p>;
}

export function Loading({ what }: { what: string }) {
  return <p className="muted" role="status">Loading {what}…</p>;
}

export function Pagination({ page, pages, onPage }: { page: number; pages: number; onPage: (page: number) => void }) {
  if (pages <= 1) return null;
  return (
    <nav className="pagination" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>Previous</button>
      <span>Page {page} of {pages}</span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>Next</button>
    </nav>
  );
}

export function CopyButton({ text, what }: { text: string; what: string }) {
  const [copied, setCopied] = useState<'idle' | 'done' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('done');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <button type="button" className="secondary small" onClick={copy} aria-label={`Copy ${what}`}>
      {copied === 'done' ? 'Copied' : copied === 'failed' ? 'Copy failed: select and copy' : 'Copy'}
    </button>
  );
}

/** A modal dialog on the browser's own <dialog>: focus kept inside, Escape closes. */
export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      if (typeof dialog.showModal === 'function') dialog.showModal();
      else dialog.setAttribute('open', '');
    } else if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onClose={onClose} onCancel={onClose}>
      {open && (
        <>
          <h2 id="dialog-title">{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}
