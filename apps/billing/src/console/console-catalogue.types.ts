// The catalogue page's answer, as billing sends it and the console (apps/billing/console) reads
// it: plain types with no imports, so the browser bundle can take them from here.

export interface ConsoleModel {
  id: string;
  name: string;
  developer: string;
  type: string;
  aliases: string[];
  contextLength: number | null;
  outputMax: number | null;
  capabilities: string[];
  modalities: { input: string[]; output: string[] } | null;
  prices: Array<{ unit: string; price: number; per: number; promptTokensAbove?: number }>;
  /** The providers the catalogue routes it to (names only). */
  providers: string[];
  /** Whether a gateway can route it now; null when no gateway answered. */
  configured: boolean | null;
}

export interface ConsoleCatalogue {
  revision: number;
  /** What the answering gateway reported; null when none answered within the time. */
  gateway: { revision: number | null; providers: string[] } | null;
  models: ConsoleModel[];
}
