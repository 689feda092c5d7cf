import { existsSync } from 'node:fs';
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isCloudKind, PROVIDERS } from '@igw/providers';

/** Demo mode: every provider without a key of its own is played by the local emulator. */
export function emulatedProviders(configured: Record<string, string>, emulatorUrl: string): {
  providers: Record<string, string>;
  emulated: string[];
} {
  const providers = { ...configured };
  const emulated: string[] = [];
  for (const definition of PROVIDERS) {
    // A cloud platform is configured by its region or location and reached with the machine's own
    // identity: the demo plays the model makers' APIs, which serve the same models.
    if (configured[definition.variables.apiKey] || isCloudKind(definition.kind)) continue;
    providers[definition.variables.apiKey] = 'emulator';
    providers[definition.variables.baseUrl] = `${emulatorUrl}${definition.emulatorPath}`;
    emulated.push(definition.name);
  }
  return { providers, emulated };
}

const DEMO_CREDITS = 10_000_000;
/** The one key demo mode hands out, kept between starts. */
const DEMO_KEY_NAME = 'demo';

interface StoredDemoKey {
  accountId: string;
  keyId: string;
  key: string;
}

/**
 * The demo account (created once) and its one key: the key kept in `<DATA_DIR>/demo-key`
 * (owner-only, like the admin token beside it) is reused while billing still accepts it;
 * otherwise a new one is made. Every other active demo key of the account is revoked, so
 * restarts never leave working keys behind.
 */
export async function createDemoKey(billingUrl: string, adminToken: string, dataDir: string): Promise<{ accountId: string; key: string }> {
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const idFile = path.resolve(dataDir, 'demo-account-id');
  const keyFile = path.resolve(dataDir, 'demo-key');
  let accountId = existsSync(idFile) ? (await readFile(idFile, 'utf8')).trim() : '';
  if (accountId) {
    const existing = await fetch(`${billingUrl}/admin/v1/accounts/${encodeURIComponent(accountId)}`, { headers });
    if (!existing.ok) accountId = '';
  }
  if (!accountId) {
    const created = await adminCall<{ id: string }>('POST', `${billingUrl}/admin/v1/accounts`, headers, { name: 'demo', plan: 'paid', credits: DEMO_CREDITS });
    accountId = created.id;
    await writeFile(idFile, `${accountId}\n`);
  }

  let demoKey = await readStoredKey(keyFile);
  if (demoKey?.accountId !== accountId || !(await keyWorks(billingUrl, demoKey.key))) demoKey = undefined;
  if (!demoKey) {
    const created = await adminCall<{ id: string; key: string }>('POST', `${billingUrl}/admin/v1/accounts/${accountId}/keys`, headers, { name: DEMO_KEY_NAME });
    demoKey = { accountId, keyId: created.id, key: created.key };
    await writeOwnerOnly(keyFile, `${JSON.stringify(demoKey)}\n`);
  }
  await revokeOtherDemoKeys(billingUrl, headers, accountId, demoKey.keyId);
  return { accountId, key: demoKey.key };
}

async function readStoredKey(file: string): Promise<StoredDemoKey | undefined> {
  try {
    const stored = JSON.parse(await readFile(file, 'utf8')) as Partial<StoredDemoKey>;
    if (typeof stored.accountId === 'string' && typeof stored.keyId === 'string' && typeof stored.key === 'string') {
      return { accountId: stored.accountId, keyId: stored.keyId, key: stored.key };
    }
  } catch {
    // Missing or unreadable: a new key is made and the file rewritten.
  }
  return undefined;
}

/** Billing answers the balance only for a known, unrevoked key. */
async function keyWorks(billingUrl: string, key: string): Promise<boolean> {
  const response = await fetch(`${billingUrl}/v1/billing/balance`, { headers: { authorization: `Bearer ${key}` } });
  await response.body?.cancel();
  return response.ok;
}

async function revokeOtherDemoKeys(billingUrl: string, headers: Record<string, string>, accountId: string, keepKeyId: string): Promise<void> {
  const keys = await adminCall<{ data: Array<{ id: string; name: string | null; revokedAt: string | null }> }>(
    'GET',
    `${billingUrl}/admin/v1/accounts/${accountId}/keys`,
    headers,
  );
  for (const key of keys.data) {
    if (key.id === keepKeyId || key.revokedAt !== null || key.name !== DEMO_KEY_NAME) continue;
    const response = await fetch(`${billingUrl}/admin/v1/keys/${key.id}`, { method: 'DELETE', headers });
    if (!response.ok && response.status !== 404) throw new Error(`revoking demo key ${key.id} answered ${response.status}: ${await response.text()}`);
  }
}

/** Written beside and then renamed over the file, so a crash never leaves half a key; 0600 even if the file existed. */
async function writeOwnerOnly(file: string, content: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}

async function adminCall<T>(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown): Promise<T> {
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}
