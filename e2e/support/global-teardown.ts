import { rm } from 'node:fs/promises';

export default async function globalTeardown(): Promise<void> {
  const embedded = (globalThis as { __embeddedPostgres?: { stop(): Promise<void>; dataDir: string } }).__embeddedPostgres;
  if (!embedded) return;
  await embedded.stop();
  await rm(embedded.dataDir, { recursive: true, force: true });
}
