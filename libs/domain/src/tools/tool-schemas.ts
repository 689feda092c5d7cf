/** Annotation keywords that carry no constraint and that several upstreams refuse. */
const DROPPED_KEYWORDS = new Set(['$schema', '$id', '$comment', 'examples']);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * `normalize_tool_schemas`: makes function tool parameter schemas acceptable to the widest
 * set of upstreams without changing what they allow. Parameters become an object schema
 * (`type: object`, `properties` present), annotation keywords are dropped at every depth,
 * and `required` keeps only properties that exist. Other tools pass unchanged.
 */
export function normalizeToolSchemas<T>(tools: readonly T[]): T[] {
  return tools.map((tool) => {
    const candidate = tool as unknown as { type?: unknown; function?: { parameters?: unknown } };
    if (candidate.type !== 'function' || !candidate.function) return tool;
    return { ...tool, function: { ...candidate.function, parameters: normalizeObjectSchema(candidate.function.parameters) } } as T;
  });
}

function normalizeObjectSchema(schema: unknown): Json {
  const base = isObject(schema) ? (clean(schema) as { [key: string]: Json }) : {};
  const properties = isObject(base.properties) ? (base.properties as { [key: string]: Json }) : {};
  const normalized: { [key: string]: Json } = { ...base, type: 'object', properties };
  if (Array.isArray(base.required)) {
    const required = base.required.filter((name): name is string => typeof name === 'string' && name in properties);
    if (required.length > 0) normalized.required = required;
    else delete normalized.required;
  }
  return normalized;
}

function clean(value: unknown): Json {
  if (Array.isArray(value)) return value.map(clean);
  if (!isObject(value)) return value as Json;
  const out: { [key: string]: Json } = {};
  for (const [key, inner] of Object.entries(value)) {
    if (!DROPPED_KEYWORDS.has(key)) out[key] = clean(inner);
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
