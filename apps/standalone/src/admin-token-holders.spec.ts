import type { DynamicModule, Provider } from '@nestjs/common';
import { ADMIN_TOKEN } from '@igw/http';
import { loadEnvironment, SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { BillingModule } from '@igw/billing-app';
import { CatalogueModule } from '@igw/catalogue-app';
import { DecisionsModule } from '@igw/decisions-app';
import { GatewayModule } from '@igw/gateway-app';

const TOKEN = 'admin-token-0123456789abcdef';

/** The providers a module and the modules it was configured with (its dynamic imports) are given. */
function providersOf(module: DynamicModule): Provider[] {
  const imported = (module.imports ?? []).filter((entry): entry is DynamicModule => typeof entry === 'object' && entry !== null && 'module' in entry);
  return [...(module.providers ?? []), ...imported.flatMap(providersOf)];
}

/** Everything a module is given to hold: its providers' values. */
function heldValues(module: DynamicModule): unknown[] {
  return providersOf(module).flatMap((provider) => (typeof provider === 'object' && 'useValue' in provider ? [provider.useValue] : []));
}

const holdsToken = (module: DynamicModule) => heldValues(module).some((value) => JSON.stringify(value)?.includes(TOKEN));

/**
 * The standalone app has the admin token at hand (ADMIN_TOKEN or its generated file) and
 * composes the four services from the same settings: only billing and the catalogue, which
 * check it, may hold it; the internet-facing gateway and decisions keep none of it.
 */
describe('who holds the admin token', () => {
  const { env, providers } = loadEnvironment({ ADMIN_TOKEN: TOKEN, DATABASE_URL: 'postgres://igw@127.0.0.1:5432/igw' });
  const settings: ServiceSettings = { env, providers, databaseUrl: env.DATABASE_URL, queue: { kind: 'postgres', url: env.DATABASE_URL!, schema: 'bullmq' } };
  const owned = { ...settings, databaseUrl: env.DATABASE_URL!, adminToken: TOKEN };

  it.each([
    ['the gateway', () => GatewayModule.forRoot(settings)],
    ['decisions', () => DecisionsModule.forRoot(settings)],
  ])('%s holds no admin token, though its environment had one', (_name, build) => {
    const module = build();
    expect(holdsToken(module)).toBe(false);
    const held = (providersOf(module).find((provider) => typeof provider === 'object' && provider.provide === SERVICE_SETTINGS) as { useValue: ServiceSettings }).useValue;
    expect(held.env).not.toHaveProperty('ADMIN_TOKEN');
    expect(held.env.PORT).toBe(env.PORT);
  });

  it.each([
    ['billing', () => BillingModule.forRoot(owned)],
    ['catalogue', () => CatalogueModule.forRoot(owned)],
  ])('%s holds it, to check it', (_name, build) => {
    const module = build();
    expect(module.providers).toContainEqual({ provide: ADMIN_TOKEN, useValue: TOKEN });
  });
});
