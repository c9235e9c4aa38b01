import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { positiveInteger, runs, seg } from '../runtime.js';

export function registerTokenCommands(program: Command): void {
  const tokens = program.command('tokens').description('API tokens for pipelines');

  tokens
    .command('list')
    .description('Your tokens (an admin sees everyone\'s)')
    .action(runs(async (rt) => {
      const client = await rt.client();
      const items = await client.get<Array<Record<string, unknown>>>('/auth/api-tokens');
      const rows = items.map((t) => ({ ...t, reads: Array.isArray(t.distributions) ? t.distributions.join(',') : '' }));
      rt.out.result(items, () => rt.out.table(rows, [['token_id', 'ID'], 'name', 'kind', 'role', ['reads', 'READS'], 'username', ['expires_at', 'EXPIRES'], ['last_used_at', 'LAST USED']]));
      return EXIT.ok;
    }));

  tokens
    .command('create')
    .description('Create a token; the secret is shown once, on stdout')
    .argument('<name>')
    .option('--role <role>', 'at most your own role')
    .option('--read <codenames>', 'a read token (tg_r_…) for these distributions, comma-separated: reads their /repo/ files, nothing else')
    .option('--expires-days <days>', 'never expires when omitted', positiveInteger)
    .action(runs(async (rt, name: string, opts: { role?: string; read?: string; expiresDays?: number }) => {
      const client = await rt.client();
      const read = opts.read?.split(',').map((c) => c.trim()).filter(Boolean);
      const body = read ? { name, role: opts.role, kind: 'read', distributions: read, expires_days: opts.expiresDays } : { name, role: opts.role, expires_days: opts.expiresDays };
      const answer = await client.post<{ token_id: string; token: string; role: string; expires_at: string | null }>('/auth/api-tokens', body);
      rt.out.result(answer, () => answer.token);
      const what = read ? `read token for ${read.join(', ')}` : answer.role;
      rt.out.note(`token ${answer.token_id} (${what}${answer.expires_at ? `, expires ${answer.expires_at}` : ', never expires'}): store it now, it is not shown again`);
      return EXIT.ok;
    }));

  tokens
    .command('revoke')
    .description('Revoke a token now')
    .argument('<token_id>')
    .action(runs(async (rt, id: string) => {
      const client = await rt.client();
      await client.delete(`/auth/api-tokens/${seg(id)}`);
      rt.out.result({ revoked: id }, () => `token ${id} revoked`);
      return EXIT.ok;
    }));
}
