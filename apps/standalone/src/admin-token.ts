import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The admin token of a standalone install: ADMIN_TOKEN, else one generated once and kept in the data folder. */
export async function standaloneAdminToken(dataDir: string, configured: string | undefined): Promise<{ token: string; file?: string }> {
  if (configured) return { token: configured };
  const file = path.resolve(dataDir, 'admin-token');
  if (existsSync(file)) return { token: (await readFile(file, 'utf8')).trim(), file };
  await mkdir(dataDir, { recursive: true });
  const token = randomBytes(24).toString('base64url');
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return { token, file };
}
