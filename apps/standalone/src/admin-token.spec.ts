import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { standaloneAdminToken } from './admin-token';

describe('standaloneAdminToken', () => {
  let dataDir: string;
  beforeEach(async () => (dataDir = await mkdtemp(path.join(tmpdir(), 'igw-admin-token-'))));
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('generates a token once and reads the same one back', async () => {
    const first = await standaloneAdminToken(dataDir, undefined);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect((await readFile(first.file!, 'utf8')).trim()).toBe(first.token);
    expect(await standaloneAdminToken(dataDir, undefined)).toEqual(first);
  });

  it.each([
    ['an empty file', '', /admin-token is empty: it must hold the admin token \(at least 16 characters\)/],
    ['a file of whitespace', ' \n\t\n', /admin-token is empty/],
    ['a file of a short token', 'short\n', /admin-token holds only 5 characters/],
  ])('refuses to start with %s instead of taking it as the token', async (_, content, message) => {
    await writeFile(path.join(dataDir, 'admin-token'), content);
    await expect(standaloneAdminToken(dataDir, undefined)).rejects.toThrow(message);
    await expect(standaloneAdminToken(dataDir, undefined)).rejects.toThrow(/delete the file to have a new token generated/);
  });

  it('takes ADMIN_TOKEN over the file', async () => {
    await writeFile(path.join(dataDir, 'admin-token'), '');
    expect(await standaloneAdminToken(dataDir, 'an-admin-token-given-outright')).toEqual({ token: 'an-admin-token-given-outright' });
  });
});
