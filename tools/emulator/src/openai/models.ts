// GET /v1/models and GET /v1/models/{id}: a fixed, deterministic catalogue.
import type { RequestContext } from '../context';

const CREATED = 1_700_000_000;

export const EMULATED_MODELS: readonly string[] = [
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-4.1',
  'gpt-4.1-mini',
  'text-embedding-3-small',
  'text-embedding-3-large',
];

const modelObject = (id: string): { id: string; object: 'model'; created: number; owned_by: string } => ({
  id,
  object: 'model',
  created: CREATED,
  owned_by: 'emulator',
});

export function listModels(ctx: RequestContext): void {
  ctx.json(200, { object: 'list', data: EMULATED_MODELS.map(modelObject) });
}

export function retrieveModel(ctx: RequestContext): void {
  const id = safeDecode(ctx.params[0] ?? '');
  if (!EMULATED_MODELS.includes(id)) {
    ctx.error(404, `The model '${id}' does not exist or you do not have access to it.`, { param: 'model', code: 'model_not_found' });
    return;
  }
  ctx.json(200, modelObject(id));
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
