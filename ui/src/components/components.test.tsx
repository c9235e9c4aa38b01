import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, setCsrfToken } from '../api';
import { SessionProvider } from '../session';
import type { Role } from '../types';
import { ErrorNotice } from './bits';
import { DecideDialog } from './DecideDialog';
import { Layout } from './Layout';

function withProviders(ui: React.ReactNode) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <MemoryRouter>
        <SessionProvider>{ui}</SessionProvider>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

/** A fetch that answers GET /auth/session with this role and records everything else. */
function fakeService(role: Role, canDecide = role === 'admin') {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const fetch = vi.fn(async (url: string, init: RequestInit = {}) => {
    calls.push({ url, init });
    if (url === '/auth/session') {
      return Response.json({ user: { username: `a-${role}`, role }, role, csrf_token: 'csrf-1', can_decide: canDecide });
    }
    return Response.json({ status: 'accepted_risk' });
  });
  vi.stubGlobal('fetch', fetch);
  return calls;
}

afterEach(() => {
  vi.unstubAllGlobals();
  setCsrfToken(null);
});

describe('navigation by role', () => {
  it('offers a reader no upload, review queue, users or settings', async () => {
    fakeService('reader');
    withProviders(<Layout />);
    await screen.findByText('a-reader');
    expect(screen.getByRole('link', { name: 'Packages' })).toBeTruthy();
    for (const hidden of ['Upload', 'Review queue', 'Users', 'Settings', 'API tokens', 'Audit log']) {
      expect(screen.queryByRole('link', { name: hidden }), hidden).toBeNull();
    }
  });

  it('offers an admin every page', async () => {
    fakeService('admin');
    withProviders(<Layout />);
    await screen.findByText('a-admin');
    for (const shown of ['Upload', 'Review queue', 'Users', 'Settings', 'API tokens', 'Audit log']) {
      expect(screen.getByRole('link', { name: shown }), shown).toBeTruthy();
    }
  });
});

describe('the decide dialog', () => {
  const target = { name: 'libfoo', version: '1.0', arch: 'amd64', distribution: 'bookworm' };

  it('sends nothing until the contract is met, then posts the decision with the CSRF token', async () => {
    const calls = fakeService('admin');
    withProviders(<DecideDialog target={target} onClose={() => {}} />);
    await waitFor(() => expect(calls.some((c) => c.url === '/auth/session')).toBe(true));
    const decisions = () => calls.filter((c) => c.url.includes('/decide'));

    fireEvent.click(screen.getByRole('button', { name: 'Record decision' }));
    expect(await screen.findByText(/justification is required/)).toBeTruthy();

    fireEvent.click(screen.getByLabelText(/Exception/));
    fireEvent.change(screen.getByLabelText(/Justification/), { target: { value: 'Vendor patch scheduled' } });
    fireEvent.click(screen.getByRole('button', { name: 'Record decision' }));
    expect(await screen.findByText(/exception needs an expiry/)).toBeTruthy();

    fireEvent.click(screen.getByLabelText(/Upgrade required/));
    fireEvent.click(screen.getByRole('button', { name: 'Record decision' }));
    expect(await screen.findByText(/Name the version/)).toBeTruthy();
    expect(decisions()).toHaveLength(0);

    fireEvent.change(screen.getByLabelText(/Target version/), { target: { value: '1.1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Record decision' }));
    await waitFor(() => expect(decisions()).toHaveLength(1));
    const sent = decisions()[0]!;
    expect(sent.url).toBe('/security/packages/libfoo/1.0/decide?arch=amd64&distribution=bookworm');
    expect(JSON.parse(String(sent.init.body))).toEqual({ action: 'upgrade_required', justification: 'Vendor patch scheduled', target_version: '1.1' });
    expect((sent.init.headers as Record<string, string>)['x-csrf-token']).toBe('csrf-1');
  });
});

describe('errors', () => {
  it('says a 403 is the role, and shows other errors with their code', () => {
    const { rerender } = render(<ErrorNotice error={new ApiError(403, 'forbidden', 'Your role does not allow this action')} />);
    expect(screen.getByRole('alert').textContent).toMatch(/^Your role does not allow this/);
    rerender(<ErrorNotice error={new ApiError(409, 'not_in_review', 'package is published, not awaiting a security decision')} />);
    expect(screen.getByRole('alert').textContent).toBe('package is published, not awaiting a security decision (not_in_review)');
  });
});
