import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CatalogueFileError, DEFAULT_CATALOGUE_FILE, readCatalogueFile } from './catalogue-file';

async function fileWith(yaml: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'igw-catalogue-')), 'catalogue.yaml');
  await writeFile(file, yaml);
  return file;
}

const entry = (overrides: string) => `
models:
  - id: a/b
    aliases: [b]
    type: openai/chat-completions
    info: { name: B, developer: A }
    tags: []
    routing: { sources: [{ provider: openai, model: b }] }
${overrides}`;

describe('the catalogue file', () => {
  it('ships a valid catalogue with unique names', async () => {
    const models = await readCatalogueFile(DEFAULT_CATALOGUE_FILE);
    expect(models.length).toBeGreaterThan(0);
    for (const model of models) expect(model.routing.sources.length).toBeGreaterThan(0);
  });

  it.each([
    ['a missing id', entry('').replace('id: a/b', 'id: ""'), /models\[0\].*field "id"/],
    ['a type without endpoint kind', entry('').replace('openai/chat-completions', 'chat'), /\(a\/b\): field "type"/],
    ['no routing source', entry('').replace('[{ provider: openai, model: b }]', '[]'), /\(a\/b\): field "routing.sources"/],
    ['a price without per', entry('    pricing: { kind: fixed, currency: USD, units: [{ unit: input_tokens, price: 1 }] }'), /pricing.units\[0\].per/],
    ['a name used twice', `${entry('')}
  - id: c/d
    aliases: [B]
    type: openai/chat-completions
    info: { name: D, developer: C }
    tags: []
    routing: { sources: [{ provider: openai, model: d }] }`, /name "B" of c\/d is already used by a\/b/],
  ])('stops on %s, naming the entry and field', async (_label, yaml, message) => {
    const file = await fileWith(yaml);
    await expect(readCatalogueFile(file)).rejects.toThrow(CatalogueFileError);
    await expect(readCatalogueFile(file)).rejects.toThrow(message);
  });
});
