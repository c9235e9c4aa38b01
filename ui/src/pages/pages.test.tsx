import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../api';
import { SessionProvider, useSession } from '../session';
import type { Distribution, Role } from '../types';
import { distributionBody, emptyForm } from './DistributionEditor';
import { DashboardPage } from './DashboardPage';
import { DistributionsPage } from './DistributionsPage';
import { DownloadsPage } from './DownloadsPage';
import { PackagePage } from './PackagePage';
import { PackagesPage } from './PackagesPage';
import { TokensPage } from './TokensPage';
import { UploadPage } from './UploadPage';

type Call = { method: string; url: string; body: unknown };
type Answer = (call: Call) => Response | undefined | Promise<Response | undefined>;

const dist = (codename: string, over: Partial<Distribution> = {}): Distribution => ({
  codename, description: `${codename} repo`, format: 'deb', architecture: 'amd64', package_count: 0, published_at: null, up_to_date: true,
  architectures: ['amd64', 'all'], index_architectures: ['amd64'], components: ['main'], suite: codename, origin: 'Tollgate', label: 'Tollgate',
  private: false, built_in: true, ...over,
});
const DISTRIBUTIONS = [dist('bookworm'), dist('team-a', { private: true, built_in: false }), dist('rocky9', { format: 'rpm', components: [], index_architectures: ['x86_64'] })];

/** A fetch answering the session (with this role), the distributions, and whatever `answer` knows; records every call. */
function fakeService(role: Role, answer: Answer = () => undefined) {
  const calls: Call[] = [];
  vi.stubGlobal('fetch', vi.fn(async (url: string, init: RequestInit = {}) => {
    const body = typeof init.body === 'string' ? JSON.parse(init.body) : init.body;
    const call = { method: init.method ?? 'GET', url, body };
    calls.push(call);
    if (url === '/auth/session') return Response.json({ user: { username: `a-${role}`, role }, role, csrf_token: 'csrf-1', can_decide: role === 'admin' });
    const own = await answer(call);
    if (own) return own;
    if (url === '/distributions/') return Response.json(DISTRIBUTIONS);
    if (url === '/health') return Response.json({ status: 'ok', edition: 'enterprise' });
    return Response.json({ detail: `no fake for ${url}`, code: 'not_found' }, { status: 404 });
  }));
  return calls;
}

function Ready({ children }: { children: React.ReactNode }) {
  const { session } = useSession();
  return session ? <>{children}</> : null;
}

function show(path: string, routes: React.ReactNode) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <MemoryRouter initialEntries={[path]}>
        <SessionProvider><Ready><Routes>{routes}</Routes></Ready></SessionProvider>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const page = <T,>(items: T[], total = items.length) => Response.json({ items, total, page: 1, per_page: 50, pages: Math.max(1, Math.ceil(total / 50)) });

afterEach(() => {
  vi.unstubAllGlobals();
  setCsrfToken(null);
});

describe('packages page', () => {
  it('asks the service to filter by status, so the total and the pages count the matching versions', async () => {
    const calls = fakeService('reader', ({ url }) => (url.startsWith('/packages/') ? page([], url.includes('status=quarantined') ? 3 : 120) : undefined));
    show('/packages', <Route path="packages" element={<PackagesPage />} />);
    expect(await screen.findByText('120 package versions')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: 'quarantined' } });
    expect(await screen.findByText('3 package versions quarantined')).toBeTruthy();
    const lists = calls.filter((c) => c.url.startsWith('/packages/')).map((c) => c.url);
    expect(lists.at(-1)).toBe('/packages/?status=quarantined&page=1&per_page=50');
  });
});

describe('dashboard', () => {
  it('shows the service health component by component, what each reports beside its state', async () => {
    fakeService('reader', ({ url }) => {
      if (url === '/dashboard/summary') return Response.json({ packages_total: 3, pending_reviews: 0, findings: { critical: 0, high: 0, medium: 0, low: 0, negligible: 0 }, findings_total: 0, recent_activity: [] });
      if (url === '/dashboard/history?days=30') return Response.json({ history: [] });
      if (url === '/health') {
        return Response.json({
          status: 'degraded', version: 'v1.2.0', edition: 'enterprise',
          components: {
            database: { ok: true, configured: true, dialect: 'postgres' },
            clamav: { ok: false, configured: true, detail: 'clamd does not answer' },
            redis: { ok: false, configured: false, detail: 'REDIS_URL not set' },
            gpg: { ok: true, configured: true, key_count: 2 },
          },
        });
      }
      return undefined;
    });
    show('/', <Route path="/" element={<DashboardPage />} />);
    const section = within(await screen.findByRole('region', { name: 'Service health' }));
    expect(await section.findByText('degraded')).toBeTruthy();
    const row = (name: string) => within(section.getByText(name).closest('tr')!);
    expect(row('Database').getByText('ok')).toBeTruthy();
    expect(row('Database').getByText('dialect postgres')).toBeTruthy();
    expect(row('Antivirus (clamd)').getByText('failing')).toBeTruthy();
    expect(row('Antivirus (clamd)').getByText('clamd does not answer')).toBeTruthy();
    expect(row('Redis (shared rate limits)').getByText('not configured')).toBeTruthy();
    expect(row('Signing key').getByText('key count 2')).toBeTruthy();
  });
});

describe('API tokens page', () => {
  it('creates a read token for the distributions picked, and shows it once with a copy button', async () => {
    const calls = fakeService('uploader', ({ method, url }) => {
      if (url === '/auth/api-tokens' && method === 'GET') return Response.json([]);
      if (url === '/auth/api-tokens' && method === 'POST') return Response.json({ token: 'tg_r_secret', name: 'apt hosts', kind: 'read', message: 'Store this token now' }, { status: 201 });
      return undefined;
    });
    show('/tokens', <Route path="tokens" element={<TokensPage />} />);
    fireEvent.change(await screen.findByLabelText('Name'), { target: { value: 'apt hosts' } });
    fireEvent.click(screen.getByLabelText(/Read token/));
    expect(screen.queryByLabelText('Role')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Create token' }));
    expect(await screen.findByText(/reads at least one distribution/)).toBeTruthy();
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(0);

    fireEvent.click(await screen.findByLabelText(/team-a/));
    fireEvent.click(screen.getByRole('button', { name: 'Create token' }));
    expect((await screen.findByTestId('new-token')).textContent).toBe('tg_r_secret');
    expect(screen.getByRole('button', { name: 'Copy the token' })).toBeTruthy();
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.body)).toEqual([{ name: 'apt hosts', kind: 'read', distributions: ['team-a'] }]);
  });

  it('starts on a read token for the distribution a package page links with', async () => {
    fakeService('uploader', ({ url }) => (url === '/auth/api-tokens' ? Response.json([]) : undefined));
    show('/tokens?read=team-a', <Route path="tokens" element={<TokensPage />} />);
    expect(((await screen.findByLabelText(/team-a/)) as HTMLInputElement).checked).toBe(true);
    expect((screen.getByLabelText(/bookworm/) as HTMLInputElement).checked).toBe(false);
  });
});

const sse = (events: Array<[string, unknown]>) =>
  new Response(events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(''), { headers: { 'content-type': 'text/event-stream' } });

describe('upload page', () => {
  it('sends a set of files as its uploads, side by side: a .dsc with the files it names, a .deb alone, each with its own steps', async () => {
    let secondSent = () => {};
    const second = new Promise<void>((resolve) => { secondSent = resolve; });
    let uploads = 0;
    const calls = fakeService('uploader', async ({ url, body }) => {
      if (url !== '/upload/stream') return undefined;
      const name = ((body as FormData).get('file') as File).name;
      // The first is answered only once the second is under way: sent one after the other, it never would be.
      if (++uploads === 1) await second;
      else secondSent();
      return sse([['step', { step: 'format', state: 'started' }], ['step', { step: 'format', state: 'finished', status: 'passed' }], ['result', { http_status: 201, status: 'published', name, version: '1' }]]);
    });
    show('/upload', <Route path="upload" element={<UploadPage />} />);
    await screen.findByRole('option', { name: 'bookworm (deb)' });
    const dsc = 'Format: 3.0 (quilt)\nSource: hello\nFiles:\n 0123 10 hello_1.orig.tar.gz\n 4567 10 hello_1-1.debian.tar.xz\n';
    const files = [new File(['x'], 'tool_1_amd64.deb'), new File([dsc], 'hello_1-1.dsc'), new File(['t'], 'hello_1.orig.tar.gz'), new File(['d'], 'hello_1-1.debian.tar.xz')];
    fireEvent.change(screen.getByLabelText('Choose files'), { target: { files } });
    expect(await screen.findByText('2 uploads of 4 files:')).toBeTruthy();
    expect((screen.getByLabelText('Distribution') as HTMLSelectElement).value).toBe('bookworm');
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await waitFor(() => expect(screen.getAllByRole('heading', { name: /Result:/ })).toHaveLength(2));

    const sent = calls.filter((c) => c.url === '/upload/stream').map((c) => c.body as FormData);
    expect(sent.map((f) => [f.get('distribution'), (f.get('file') as File).name, ...f.getAll('files').map((p) => (p as File).name)])).toEqual([
      ['bookworm', 'hello_1-1.dsc', 'hello_1.orig.tar.gz', 'hello_1-1.debian.tar.xz'],
      ['bookworm', 'tool_1_amd64.deb'],
    ]);
    const run = screen.getByRole('region', { name: 'Pipeline of tool_1_amd64.deb' });
    expect(within(run).getByText('format').closest('li')?.getAttribute('data-state')).toBe('finished');
    expect(within(run).getByText('signature').closest('li')?.getAttribute('data-state')).toBe('waiting');
  });
});

describe('package page install commands', () => {
  const artifact = (distribution: string) => ({
    name: 'tool', format: 'deb', latest_version: '1', versions: [],
    last_validation: { version: '1', distribution, status: 'published', steps: [] }, cve_findings: [],
  });
  const answer = (distribution: string): Answer => ({ url }) => {
    if (url === '/artifacts/tool') return Response.json(artifact(distribution));
    if (url === '/artifacts/tool/install') return Response.json({ format: 'deb', distribution, commands: ['sudo apt-get update'] });
    return undefined;
  };

  it('tells how to read a private distribution with a read token, linking to the tokens page', async () => {
    fakeService('uploader', answer('team-a'));
    show('/packages/tool', <Route path="packages/:name" element={<PackagePage />} />);
    const note = await screen.findByTestId('private-install');
    expect(within(note).getByRole('link', { name: 'Create a read token for team-a' }).getAttribute('href')).toBe('/tokens?read=team-a');
    expect(screen.getByText(/export TOLLGATE_TOKEN=/)).toBeTruthy();
  });

  it('says nothing of tokens for a public distribution, and links nowhere a reader cannot go', async () => {
    fakeService('uploader', answer('bookworm'));
    const { unmount } = show('/packages/tool', <Route path="packages/:name" element={<PackagePage />} />);
    await screen.findByText('sudo apt-get update');
    expect(screen.queryByTestId('private-install')).toBeNull();
    unmount();
    fakeService('reader', answer('team-a'));
    show('/packages/tool', <Route path="packages/:name" element={<PackagePage />} />);
    const note = await screen.findByTestId('private-install');
    expect(within(note).queryByRole('link')).toBeNull();
    expect(note.textContent).toMatch(/Ask an uploader/);
  });
});

describe('downloads page', () => {
  const stats = (byToken: boolean) => Response.json({
    days: 7, from: '2026-11-21', to: '2026-11-27', total: 42, distinct_packages: 3,
    by_day: [{ day: '2026-11-26', downloads: 40 }, { day: '2026-11-27', downloads: 2 }],
    by_distribution: [{ distribution: 'bookworm', downloads: 42 }],
    packages: [{ name: 'tool', version: '1', distribution: 'bookworm', arch: 'amd64', downloads: 42 }],
    ...(byToken ? { by_token: [{ token_id: 't1', username: 'ci', name: 'apt hosts', kind: 'read', downloads: 40 }] } : {}),
  });

  it('shows the period asked for, and the downloads per token as the service scopes them', async () => {
    const calls = fakeService('admin', ({ url }) => (url.startsWith('/downloads/stats') ? stats(true) : undefined));
    show('/downloads?days=7', <Route path="downloads" element={<DownloadsPage />} />);
    expect((await screen.findByTestId('downloads-total')).textContent).toBe('42');
    expect(calls.find((c) => c.url.startsWith('/downloads/stats'))?.url).toBe('/downloads/stats?days=7&limit=20');
    const tokens = screen.getByRole('region', { name: 'By token' });
    expect(within(tokens).getByRole('row', { name: /apt hosts read ci 40/ })).toBeTruthy();
    expect(screen.getByRole('img', { name: 'Downloads per day over the last 2 days' })).toBeTruthy();
  });

  it('calls them your tokens for anyone but an admin', async () => {
    fakeService('uploader', ({ url }) => (url.startsWith('/downloads/stats') ? stats(true) : undefined));
    show('/downloads', <Route path="downloads" element={<DownloadsPage />} />);
    expect(await screen.findByRole('region', { name: 'By your tokens' })).toBeTruthy();
  });
});

describe('distributions page', () => {
  const routes = <Route path="distributions" element={<DistributionsPage />} />;

  it('offers an admin the SBOM exports, editing, retiring a non-built-in one, and a new distribution', async () => {
    const calls = fakeService('admin', ({ method, url }) => (method === 'POST' && url === '/distributions' ? Response.json(dist('team-b'), { status: 201 }) : undefined));
    show('/distributions', routes);
    const row = await screen.findByRole('row', { name: /^team-a/ });
    expect(within(row).getByRole('link', { name: 'SPDX SBOM of team-a' }).getAttribute('href')).toBe('/sbom/export?distribution=team-a&format=spdx');
    expect(within(row).getByText('private')).toBeTruthy();
    expect(within(row).getByRole('button', { name: 'Retire team-a' })).toBeTruthy();
    expect(within(screen.getByRole('row', { name: /^bookworm/ })).queryByRole('button', { name: /Retire/ })).toBeNull();

    const form = screen.getByRole('form', { name: 'New distribution' });
    fireEvent.change(within(form).getByLabelText('Codename'), { target: { value: 'team-b' } });
    fireEvent.click(within(form).getByLabelText('arm64'));
    fireEvent.click(within(form).getByLabelText(/^Private/));
    fireEvent.click(within(form).getByRole('button', { name: 'Create distribution' }));
    await screen.findByText(/Created team-b/);
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.body)).toEqual([
      { codename: 'team-b', format: 'deb', architectures: ['amd64', 'arm64'], components: ['main'], private: true },
    ]);
  });

  it('offers an auditor the SBOM exports only, and a reader neither', async () => {
    fakeService('auditor');
    const { unmount } = show('/distributions', routes);
    const row = await screen.findByRole('row', { name: /^team-a/ });
    expect(within(row).getByRole('link', { name: 'CycloneDX SBOM of team-a' })).toBeTruthy();
    expect(within(row).queryByRole('button')).toBeNull();
    expect(screen.queryByRole('form', { name: 'New distribution' })).toBeNull();
    unmount();
    fakeService('reader');
    show('/distributions', routes);
    const readerRow = await screen.findByRole('row', { name: /^team-a/ });
    expect(within(readerRow).queryByRole('link')).toBeNull();
  });

  it('says SBOMs are Enterprise\'s on Community rather than linking to a 402', async () => {
    fakeService('admin', ({ url }) => (url === '/health' ? Response.json({ status: 'ok', edition: 'community' }) : undefined));
    show('/distributions', routes);
    const row = await screen.findByRole('row', { name: /^team-a/ });
    await within(row).findByText('Enterprise edition');
    expect(within(row).queryByRole('link')).toBeNull();
  });

  it('sends no components for an RPM distribution and neither codename nor format in a change', () => {
    expect(distributionBody({ ...emptyForm(), codename: ' el9 ', format: 'rpm', architectures: ['x86_64'], components: 'main' }, true))
      .toEqual({ codename: 'el9', format: 'rpm', architectures: ['x86_64'], private: false });
    expect(distributionBody({ ...emptyForm(), codename: 'x', description: 'Team B', components: 'main contrib' }, false))
      .toEqual({ description: 'Team B', architectures: ['amd64'], components: ['main', 'contrib'], private: false });
  });
});
