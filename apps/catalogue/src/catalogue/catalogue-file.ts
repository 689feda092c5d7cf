import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { catalogueFileIssues, type CatalogueModel } from '@igw/contracts';
import { ISSUES_SHOWN } from '@igw/validation';
import { parse } from 'yaml';

/** The catalogue shipped with the project; CATALOGUE_FILE points elsewhere. */
export const DEFAULT_CATALOGUE_FILE = path.resolve(__dirname, '../../data/catalogue.yaml');

/**
 * One checked entry. `resolvesTo` is spelled out here as well as in the contract so that
 * the loader keeps compiling whichever way the contract moves.
 */
export type CatalogueFileEntry = CatalogueModel & { resolvesTo?: string };

export class CatalogueFileError extends Error {}

/**
 * Reads and checks the catalogue definition (YAML, or JSON, which YAML reads too) against its
 * DTOs; a bad file stops start-up with one line per issue, each naming the entry and field.
 */
export async function readCatalogueFile(file: string): Promise<CatalogueFileEntry[]> {
  const text = await readFile(file, 'utf8');
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new CatalogueFileError(`${file}: not valid YAML: ${error instanceof Error ? error.message : String(error)}`);
  }
  const issues = catalogueFileIssues(document);
  if (issues.length > 0) {
    const models = isRecord(document) ? document.models : undefined;
    const lines = issues.slice(0, ISSUES_SHOWN).map((issue) => `${file}: ${located(issue.path, models)}${issue.message}`);
    if (issues.length > ISSUES_SHOWN) lines.push(`${file}: and ${issues.length - ISSUES_SHOWN} more`);
    throw new CatalogueFileError(lines.join('\n'));
  }
  // Unknown fields are refused, not dropped, so the checked document is the entries as written.
  return (document as { models: CatalogueFileEntry[] }).models;
}

/** `models[3] (a/b): pricing.units[0].per: ` for the path `models[3].pricing.units[0].per`: the entry by index and id. */
function located(issuePath: string, models: unknown): string {
  const entry = /^models\[(\d+)\](?:\.(.*))?$/.exec(issuePath);
  if (!entry) return issuePath ? `${issuePath}: ` : '';
  const model: unknown = Array.isArray(models) ? models[Number(entry[1])] : undefined;
  const label = isRecord(model) && typeof model.id === 'string' && model.id ? ` (${model.id})` : '';
  return `models[${entry[1]}]${label}: ${entry[2] ? `${entry[2]}: ` : ''}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
