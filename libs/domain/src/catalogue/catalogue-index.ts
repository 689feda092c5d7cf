/** What name resolution needs of an entry; catalogue entries of every shape satisfy it. */
export interface NamedModel {
  id: string;
  aliases: readonly string[];
}

/**
 * Resolves model names (ids and aliases, case-insensitive) to catalogue entries.
 * Built once per catalogue revision so look-ups on the request path are one map read.
 */
export class CatalogueIndex<M extends NamedModel> {
  private readonly byName = new Map<string, M>();

  constructor(
    readonly revision: number,
    readonly models: readonly M[],
  ) {
    for (const model of models) {
      for (const name of [model.id, ...model.aliases]) {
        const key = name.toLowerCase();
        const existing = this.byName.get(key);
        if (existing && existing.id !== model.id) {
          throw new Error(`Catalogue name "${name}" is claimed by both ${existing.id} and ${model.id}`);
        }
        this.byName.set(key, model);
      }
    }
  }

  resolve(name: string): M | undefined {
    return this.byName.get(name.toLowerCase());
  }
}
