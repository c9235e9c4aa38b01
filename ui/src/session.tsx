import { createContext, useContext, type ReactNode } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ApiError, setCsrfToken } from './api';
import type { Session, User } from './types';

interface SessionState {
  session: Session | null;
  loading: boolean;
  logout: () => Promise<void>;
}

const SessionContext = createContext<SessionState>({ session: null, loading: true, logout: async () => {} });

export const SESSION_KEY = ['session'] as const;

/** The session in force, read from the cookie the service set (null when there is none). */
async function readSession(): Promise<Session | null> {
  try {
    const session = await api<Session>('GET', '/auth/session');
    setCsrfToken(session.csrf_token);
    return session;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      setCsrfToken(null);
      return null;
    }
    throw error;
  }
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const { data, isPending } = useQuery({ queryKey: SESSION_KEY, queryFn: readSession, staleTime: 60_000 });
  const logout = async () => {
    await api('DELETE', '/auth/session').catch(() => undefined);
    setCsrfToken(null);
    client.setQueryData(SESSION_KEY, null);
    // What the last account saw is not for the next one.
    client.removeQueries({ predicate: (q) => q.queryKey[0] !== SESSION_KEY[0] });
    // The next login starts from the dashboard, not from the page the last account left open.
    await navigate('/');
  };
  return <SessionContext.Provider value={{ session: data ?? null, loading: isPending, logout }}>{children}</SessionContext.Provider>;
}

export const useSession = () => useContext(SessionContext);

export type LoginAnswer = { mfa_required: true; mfa_token: string } | { mfa_required: false; user: User; csrf_token: string };

/** The two steps of a login: the password (and the MFA prompt when the account has it). */
export function useLogin() {
  const client = useQueryClient();
  const done = async (answer: LoginAnswer) => {
    if (!answer.mfa_required) {
      setCsrfToken(answer.csrf_token);
      await client.invalidateQueries({ queryKey: SESSION_KEY });
    }
    return answer;
  };
  const password = useMutation({
    mutationFn: (body: { username: string; password: string }) => api<LoginAnswer>('POST', '/auth/session', body).then(done),
  });
  const mfa = useMutation({
    mutationFn: (body: { mfa_token: string; code: string }) => api<LoginAnswer>('POST', '/auth/session/mfa', body).then(done),
  });
  return { password, mfa };
}
