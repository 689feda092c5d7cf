import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { HttpStatus, Logger } from '@nestjs/common';
import express from 'express';
import { GatewayException } from './gateway.exception';
import { routeNotFoundMessage, sendErrorResponse } from './all-exceptions.filter';

/** The status, body message and log lines one thrown error gets. */
async function answerTo(error: unknown): Promise<{ status: number; message: string; warned: string[]; errored: string[] }> {
  const warned: string[] = [];
  const errored: string[] = [];
  const spies = [
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((line: unknown) => void warned.push(String(line))),
    jest.spyOn(Logger.prototype, 'error').mockImplementation((line: unknown) => void errored.push(String(line))),
  ];
  const app = express();
  app.get('/x', (request, response) => sendErrorResponse(request, response, error));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
    const body = (await response.json()) as { message: string };
    return { status: response.status, message: body.message, warned, errored };
  } finally {
    server.close();
    spies.forEach((spy) => spy.mockRestore());
  }
}

describe('sendErrorResponse', () => {
  it("logs a 5xx the gateway means as one warning line with its cause, and no stack", async () => {
    const answer = await answerTo(new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: no upstream is configured.', { cause: new Error('queue timed out') }));
    expect([answer.status, answer.message]).toEqual([503, 'Service Unavailable: no upstream is configured.']);
    expect(answer.errored).toEqual([]);
    expect(answer.warned).toHaveLength(1);
    expect(answer.warned[0]).toMatch(/^GET \/x -> 503 \[.*\]: Service Unavailable: no upstream is configured\. \(cause: queue timed out\)$/);
  });

  it('logs an unexpected error with its stack, and tells the client only that it failed', async () => {
    const answer = await answerTo(new TypeError('cannot read x of undefined'));
    expect(answer.status).toBe(500);
    expect(answer.message).not.toContain('cannot read');
    expect(answer.warned).toEqual([]);
    expect(answer.errored[0]).toMatch(/^GET \/x -> 500 \[.*\]: TypeError: cannot read x of undefined\n\s+at /);
  });

  it('logs nothing for a 4xx', async () => {
    const answer = await answerTo(new GatewayException(HttpStatus.BAD_REQUEST, 'Body validation error! x: bad'));
    expect([answer.status, answer.warned, answer.errored]).toEqual([400, [], []]);
  });
});

describe('routeNotFoundMessage', () => {
  it('names the method and path (no query, a long one shortened), the Swagger UI, and a hint where there is one', () => {
    const message = routeNotFoundMessage('gateway', 'docs', (path) => (path.startsWith('/v1/billing') ? 'Billing serves it.' : undefined));
    expect(message({ method: 'GET', url: '/v1/billing/balance?x=1' })).toBe('Not Found: GET /v1/billing/balance is not an endpoint of the gateway service; its Swagger UI at /docs lists them. Billing serves it.');
    expect(message({ method: 'POST', url: `/${'a'.repeat(500)}` })).toBe(`Not Found: POST /${'a'.repeat(119)}... is not an endpoint of the gateway service; its Swagger UI at /docs lists them.`);
    expect(routeNotFoundMessage('decisions', undefined)({ method: 'GET', url: '/nope' })).toBe('Not Found: GET /nope is not an endpoint of the decisions service.');
  });
});
