import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.js';
import { buildApp } from './http/app.js';
import { closeContext, createContext } from './services/context.js';
import { publishStaleIndexes } from './services/repository.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`tollgate: configuration error: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const log = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token'], censor: '[redacted]' },
  });
  const ctx = await createContext(config, log);
  // A first start generates the signing key (seconds for RSA-4096, in a worker thread); ready
  // waits for it, so start it before the HTTP layer is built rather than after.
  ctx.repo.keyring.ensureKey().catch((error: unknown) => log.error({ err: error }, 'signing key generation failed'));
  const { app } = await buildApp(ctx);
  await app.listen({ host: config.host, port: config.port });
  ctx.health.markStarted();
  void publishStaleIndexes(ctx.repo, log);
  ctx.jobs.start();
  ctx.imports.prepareResolver().catch((error: unknown) => log.warn({ err: error }, 'dependency resolver preparation failed'));

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await app.close();
    await closeContext(ctx);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error('tollgate: failed to start', error);
  process.exit(1);
});
