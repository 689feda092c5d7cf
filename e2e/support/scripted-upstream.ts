import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the upstream received: its path and JSON body. */
export interface ReceivedRequest {
  path: string;
  body: Record<string, unknown>;
}

/** The usage each wire format reports, as its provider writes it; a test sets what the next answers say. */
export interface ScriptedUsage {
  openai: Record<string, unknown>;
  anthropic: Record<string, unknown>;
  gemini: Record<string, unknown>;
}

export interface ScriptedUpstream {
  /** The base address: OpenAI at `${url}/v1`, Anthropic at `${url}`, Gemini at `${url}/v1beta`. */
  url: string;
  received: ReceivedRequest[];
  usage: ScriptedUsage;
  close(): Promise<void>;
}

const DEFAULT_USAGE: ScriptedUsage = {
  openai: { prompt_tokens: 1_000, completion_tokens: 100, total_tokens: 1_100 },
  anthropic: { input_tokens: 1_000, output_tokens: 100 },
  gemini: { promptTokenCount: 1_000, candidatesTokenCount: 100, totalTokenCount: 1_100 },
};

/**
 * A provider played by a small local server speaking OpenAI's chat completions (streamed too),
 * Anthropic's Messages and Gemini's generateContent: each answer says "ok" and reports the
 * usage the test set, so a test decides what the gateway is told it used.
 */
export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  const received: ReceivedRequest[] = [];
  const usage: ScriptedUsage = structuredClone(DEFAULT_USAGE);
  const server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const body = JSON.parse(text) as Record<string, unknown>;
      const path = (request.url ?? '').split('?')[0];
      received.push({ path, body });
      answer(path, body, usage, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    usage,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(path: string, body: Record<string, unknown>, usage: ScriptedUsage, response: ServerResponse): void {
  const created = Math.floor(Date.now() / 1000);
  if (path === '/v1/chat/completions' && body.stream === true) {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (fields: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created, model: body.model, ...fields })}\n\n`;
    response.end(
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] }) +
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
        chunk({ choices: [], usage: usage.openai }) +
        'data: [DONE]\n\n',
    );
    return;
  }
  if (path === '/v1/chat/completions') {
    return json(response, {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: usage.openai,
      ...(typeof body.service_tier === 'string' ? { service_tier: body.service_tier } : {}),
    });
  }
  if (path === '/v1/messages') {
    return json(response, { id: 'msg_1', type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: usage.anthropic });
  }
  if (/^\/v1beta\/models\/[^/:]+:generateContent$/.test(path)) {
    return json(response, { candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }], usageMetadata: usage.gemini, modelVersion: 'scripted' });
  }
  response.writeHead(404, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ error: { message: `no route ${path}` } }));
}

function json(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
