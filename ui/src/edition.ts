import { useQuery } from '@tanstack/react-query';
import { api } from './api';

/**
 * The service's edition, from the public GET /health: Enterprise-only features (SBOMs) answer 402
 * on Community, so the pages offer them only on Enterprise. Asked once per page load.
 */
export function useEnterprise(): boolean | undefined {
  const health = useQuery({ queryKey: ['edition'], queryFn: () => api<{ edition: string }>('GET', '/health'), staleTime: Infinity, retry: false });
  return health.data ? health.data.edition === 'enterprise' : undefined;
}
