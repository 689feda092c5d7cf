import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { findProvider, providerKind } from './registry';

// Every media model the shipped catalogue routes must reach a provider this lib knows, with an
// adapter for that endpoint kind: a source the gateway could never call would only surface as
// a failed request in production.

interface Entry {
  id: string;
  type: string;
  routing: { sources: Array<{ provider: string; model: string }> };
}

const CATALOGUE = path.resolve(__dirname, '../../../apps/catalogue/data/catalogue.yaml');
const models = (parse(readFileSync(CATALOGUE, 'utf8')) as { models: Entry[] }).models;

const capabilities = {
  'image-generations': 'images',
  'speech-to-text': 'transcription',
  'text-to-speech': 'speech',
} as const;

describe.each(Object.entries(capabilities))('catalogue %s models', (endpoint, capability) => {
  const entries = models.filter((model) => model.type.endsWith(`/${endpoint}`));

  it('route only to known providers with an adapter for them', () => {
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) {
      for (const source of entry.routing.sources) {
        const definition = findProvider(source.provider);
        expect({ id: entry.id, provider: source.provider, known: definition !== undefined }).toEqual({ id: entry.id, provider: source.provider, known: true });
        expect({ id: entry.id, adapter: providerKind(definition!.kind)[capability] !== undefined }).toEqual({ id: entry.id, adapter: true });
      }
    }
  });
});

it('the catalogue has the Deepgram and Stability models', () => {
  const ids = models.map((model) => model.id);
  expect(ids).toEqual(expect.arrayContaining(['deepgram/nova-3', 'deepgram/aura-2', 'stability/stable-image-core']));
});
