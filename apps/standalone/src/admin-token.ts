import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** As ADMIN_TOKEN itself must be (environment.ts): shorter is guessable. */
const MIN_TOKEN_LENGTH = 16;

/** The admin token of a standalone install: ADMIN_TOKEN, else one generated once and kept in the data folder. */
export async function standaloneAdminToken(dataDir: string, configured: string | undefined): Promise<{ token: string; file?: string }> {
  if (configured) return { token: configured };
  const file = path.resolve(dataDir, 'admin-token');
  if (existsSync(file)) {
    const token = (await readFile(file, 'utf8')).trim();
    // An emptied file would otherwise make '' the admin token, which the console's sign-in form accepts.
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new Error(
        `The admin token file ${file} ${token === '' ? 'is empty' : `holds only ${token.length} characters`}: it must hold the admin token (at least ${MIN_TOKEN_LENGTH} characters). ` +
          'Put the token back, set ADMIN_TOKEN, or delete the file to have a new token generated.',
      );
    }
    return { token, file };
  }
  await mkdir(dataDir, { recursive: true });
  const token = randomBytes(24).toString('base64url');
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return { token, file };
}
