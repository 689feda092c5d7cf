import { COULD_NOT_CHECK, runReconcile } from './reconcile-command';

async function run(env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runReconcile({ stdout: { write: (chunk: string) => (stdout += chunk) }, stderr: { write: (chunk: string) => (stderr += chunk) }, env });
  return { code, stdout, stderr };
}

describe('runReconcile without a usable database setting', () => {
  it.each([[{}], [{ DATABASE_URL: '' }], [{ DATABASE_URL: '   ' }]])('explains a missing DATABASE_URL (%j) and exits 2', async (env) => {
    const result = await run(env);
    expect(result).toEqual({ code: COULD_NOT_CHECK, stdout: '', stderr: expect.stringContaining('DATABASE_URL is not set') });
    expect(result.stderr).toContain('npm run reconcile');
  });

  it('refuses a DATABASE_URL that is not a postgres:// URL', async () => {
    const result = await run({ DATABASE_URL: 'mysql://root@localhost/billing' });
    expect(result).toEqual({ code: COULD_NOT_CHECK, stdout: '', stderr: expect.stringContaining('DATABASE_URL must be a postgres:// URL') });
  });
});
