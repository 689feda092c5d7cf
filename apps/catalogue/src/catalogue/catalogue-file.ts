import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CatalogueModel } from '@igw/contracts';
import { parse } from 'yaml';

/** The catalogue shipped with the project; CATALOGUE_FILE points elsewhere. */
export const DEFAULT_CATALOGUE_FILE = path.resolve(__dirname, '../../data/catalogue.yaml');

export class CatalogueFileError extends Error {}

/** Reads and checks the catalogue definition; a bad entry stops start-up with its id and field. */
export async function readCatalogueFile(file: string): Promise<CatalogueModel[]> {
  const text = await readFile(file, 'utf8');
  const document = parse(text) as { models?: unknown };
  if (!document || !Array.isArray(document.models)) throw new CatalogueFileError(`${file}: expected a top-level "models" list`);
  const models = document.models.map((entry, index) => checkEntry(entry, `${file}: models[${index}]`));
  const seen = new Map<string, string>();
  for (const model of models) {
    for (const name of [model.id, ...model.aliases]) {
      const key = name.toLowerCase();
      const owner = seen.get(key);
      if (owner) throw new CatalogueFileError(`${file}: name "${name}" of ${model.id} is already used by ${owner}`);
      seen.set(key, model.id);
    }
  }
  return models;
}

function checkEntry(entry: unknown, where: string): CatalogueModel {
  const fail = (field: string, problem: string): never => {
    const id = isRecord(entry) && typeof entry.id === 'string' ? ` (${entry.id})` : '';
    throw new CatalogueFileError(`${where}${id}: field "${field}" ${problem}`);
  };
  if (!isRecord(entry)) return fail('(entry)', 'must be an object');
  const model = entry as unknown as CatalogueModel;
  if (typeof model.id !== 'string' || !model.id.trim()) fail('id', 'must be a non-empty string');
  if (!Array.isArray(model.aliases) || model.aliases.some((alias) => typeof alias !== 'string' || !alias)) fail('aliases', 'must be a list of names');
  if (typeof model.type !== 'string' || !/^[^/\s]+\/[^/\s]+$/.test(model.type)) fail('type', 'must look like <family>/<endpoint-kind>');
  if (!isRecord(model.info) || typeof model.info.name !== 'string' || typeof model.info.developer !== 'string') {
    fail('info', 'must hold at least name and developer');
  }
  if (!Array.isArray(model.tags) || model.tags.some((tag) => typeof tag !== 'string')) fail('tags', 'must be a list of strings');
  if (model.pricing !== undefined) {
    if (model.pricing.kind !== 'fixed' || model.pricing.currency !== 'USD' || !Array.isArray(model.pricing.units)) {
      fail('pricing', 'must be {kind: fixed, currency: USD, units: [...]}');
    }
    model.pricing.units.forEach((unit, index) => {
      if (typeof unit.unit !== 'string' || typeof unit.price !== 'number' || unit.price < 0) fail(`pricing.units[${index}]`, 'needs unit and a non-negative price');
      if (!Number.isInteger(unit.per) || unit.per <= 0) fail(`pricing.units[${index}].per`, 'must be a positive integer');
    });
  }
  if (!isRecord(model.routing) || !Array.isArray(model.routing.sources) || model.routing.sources.length === 0) {
    fail('routing.sources', 'must list at least one upstream source');
  }
  model.routing.sources.forEach((source, index) => {
    if (typeof source.provider !== 'string' || typeof source.model !== 'string') fail(`routing.sources[${index}]`, 'needs provider and model');
  });
  return model;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
