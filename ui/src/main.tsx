import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { BrowserRouter } from 'react-router';
import { ApiError } from './api';
import { App } from './App';
import { SESSION_KEY, SessionProvider } from './session';
import './styles.css';

// A 401 anywhere means the session ended (expired, password changed, account deactivated):
// read the session again, which shows the login form.
const sessionEnded = (error: unknown) => {
  if (error instanceof ApiError && error.status === 401) void client.invalidateQueries({ queryKey: SESSION_KEY });
};
const client: QueryClient = new QueryClient({
  queryCache: new QueryCache({ onError: sessionEnded }),
  mutationCache: new MutationCache({ onError: sessionEnded }),
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      // 4xx answers do not get better by asking again.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <BrowserRouter basename="/ui">
        <SessionProvider>
          <App />
        </SessionProvider>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
