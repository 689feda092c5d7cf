// CLI entry: `npm run emulator` (or `node dist/tools/emulator/src/main.js`).
// Environment: EMULATOR_PORT (default 9090), EMULATOR_HOST (default 127.0.0.1),
// EMULATOR_API_KEY (optional; when set, requests need `Authorization: Bearer <key>`).
import { startEmulator } from './emulator';

async function main(): Promise<void> {
  const rawPort = process.env.EMULATOR_PORT ?? '9090';
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`EMULATOR_PORT must be an integer from 0 to 65535, got "${rawPort}"`);
  }
  const apiKey = process.env.EMULATOR_API_KEY;
  const emulator = await startEmulator({
    port,
    host: process.env.EMULATOR_HOST || '127.0.0.1',
    apiKey: apiKey === undefined || apiKey === '' ? undefined : apiKey,
  });
  console.log(`emulator listening on ${emulator.url}`);

  const shutdown = (): void => {
    void emulator.close().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
