import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { COULD_NOT_CHECK, runReconcile } from './reconcile-command';

let emptyDataDir: string;
beforeAll(async () => {
  emptyDataDir = await mkdtemp(path.join(tmpdir(), 'igw-reconcile-'));
});
afterAll(async () => {
  await rm(emptyDataDir, { recursive: true, force: true });
});

async function run(env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runReconcile({ stdout: { write: (chunk: string) => (stdout += chunk) }, stderr: { write: (chunk: string) => (stderr += chunk) }, env });
  return { code, stdout, stderr };
}

describe('runReconcile without a usable database setting', () => {
  it.each([[{}], [{ DATABASE_URL: '' }], [{ DATABASE_URL: '   ' }]])('explains a missing DATABASE_URL (%j) without an embedded database and exits 2', async (env) => {
    const result = await run({ ...env, DATA_DIR: emptyDataDir });
    expect(result).toEqual({ code: COULD_NOT_CHECK, stdout: '', stderr: expect.stringContaining('DATABASE_URL is not set') });
    expect(result.stderr).toContain(`${path.join(emptyDataDir, 'postgres')} holds no embedded database`);
    expect(result.stderr).toContain('npm run reconcile');
  });

  it('refuses a DATABASE_URL that is not a postgres:// URL', async () => {
    const result = await run({ DATABASE_URL: 'mysql://root@localhost/billing' });
    expect(result).toEqual({ code: COULD_NOT_CHECK, stdout: '', stderr: expect.stringContaining('DATABASE_URL must be a postgres:// URL') });
  });
});
