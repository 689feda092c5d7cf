export interface JsonResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export async function call<T = Record<string, unknown>>(
  url: string,
  init: { method?: string; token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined || init.rawBody !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(url, {
    method: init.method ?? (init.body !== undefined || init.rawBody !== undefined ? 'POST' : 'GET'),
    headers,
    body: init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : undefined) as T };
}

/**
 * The spec's error body, with x-request-id equal to requestId, and OpenAI's `error` object
 * beside it carrying the same message.
 */
export function expectErrorBody(response: JsonResponse, status: number, path: string, message?: RegExp): void {
  expect(response.status).toBe(status);
  const body = response.body as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message', 'path', 'requestId', 'statusCode', 'timestamp']);
  const error = body.error as Record<string, unknown>;
  expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(error.message).toBe(body.message);
  expect(typeof error.type).toBe('string');
  expect(error.code === null || typeof error.code === 'string').toBe(true);
  expect(error.param === null || typeof error.param === 'string').toBe(true);
  expect(body.statusCode).toBe(status);
  expect(body.path).toBe(path);
  expect(typeof body.message).toBe('string');
  expect(Number.isNaN(Date.parse(body.timestamp as string))).toBe(false);
  expect(response.headers.get('x-request-id')).toBe(body.requestId);
  if (message) expect(body.message).toMatch(message);
}
