import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PROVIDERS } from '@igw/providers';

/** Demo mode: every provider without a key of its own is played by the local emulator. */
export function emulatedProviders(configured: Record<string, string>, emulatorUrl: string): {
  providers: Record<string, string>;
  emulated: string[];
} {
  const providers = { ...configured };
  const emulated: string[] = [];
  for (const definition of PROVIDERS) {
    if (configured[definition.variables.apiKey]) continue;
    providers[definition.variables.apiKey] = 'emulator';
    providers[definition.variables.baseUrl] = `${emulatorUrl}${definition.emulatorPath}`;
    emulated.push(definition.name);
  }
  return { providers, emulated };
}

const DEMO_CREDITS = 10_000_000;

/** Creates (once) a paid demo account and a fresh key for it through the admin API. */
export async function createDemoKey(billingUrl: string, adminToken: string, dataDir: string): Promise<{ accountId: string; key: string }> {
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const idFile = path.resolve(dataDir, 'demo-account-id');
  let accountId = existsSync(idFile) ? (await readFile(idFile, 'utf8')).trim() : '';
  if (accountId) {
    const existing = await fetch(`${billingUrl}/admin/v1/accounts/${accountId}`, { headers });
    if (!existing.ok) accountId = '';
  }
  if (!accountId) {
    const created = await adminCall<{ id: string }>(`${billingUrl}/admin/v1/accounts`, headers, { name: 'demo', plan: 'paid', credits: DEMO_CREDITS });
    accountId = created.id;
    await writeFile(idFile, `${accountId}\n`);
  }
  const key = await adminCall<{ key: string }>(`${billingUrl}/admin/v1/accounts/${accountId}/keys`, headers, { name: 'demo' });
  return { accountId, key: key.key };
}

async function adminCall<T>(url: string, headers: Record<string, string>, body: unknown): Promise<T> {
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}
