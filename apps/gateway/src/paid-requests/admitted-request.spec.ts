import { createServer, request as httpRequest, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestContext } from '@igw/http';
import type { RequestHold } from '../limits/request-admission';
import type { UsageCharging } from '../usage/usage-charging';
import { AdmittedRequest, type PaidCall, type PaidRequestListener } from './admitted-request';

const call = { requestId: 'r1', endpoint: 'chat.completions' } as PaidCall;

/** An admitted request whose hold, charging and listener write what they are told into `events`. */
function admittedWith(events: string[], paidCall: PaidCall = call) {
  const hold = { spend: (micro: bigint) => events.push(`hold spends ${micro}`), release: () => events.push('hold released') } as unknown as RequestHold;
  const charging = {
    charge: (_call: PaidCall, units: Record<string, number>) => (events.push(`charge ${JSON.stringify(units)}`), { usage: { credits_used: 0.25, usd_spent: 0.0025 }, creditsMicro: 250_000n }),
  } as unknown as UsageCharging;
  const listener: PaidRequestListener = {
    attemptStarted: (provider, upstreamModel) => events.push(`attempt ${provider} ${upstreamModel}`),
    attemptAnswered: () => events.push('answered'),
    attemptFailed: (error) => events.push(`failed ${(error as Error).message}`),
    firstChunk: () => events.push('first chunk'),
    settled: (units, credits) => events.push(`settled ${JSON.stringify(units)} ${credits}`),
    finished: () => events.push('finished'),
  };
  return new AdmittedRequest(paidCall, hold, charging, listener);
}

describe('AdmittedRequest: admission, charging and telemetry behind one small surface', () => {
  it('charges a settlement, spends it against the hold and tells its listener, then returns meta.usage', () => {
    const events: string[] = [];
    const charged = admittedWith(events).settle({ output_tokens: 250 });
    expect(charged).toEqual({ credits_used: 0.25, usd_spent: 0.0025 });
    expect(events).toEqual(['charge {"output_tokens":250}', 'hold spends 250000', 'settled {"output_tokens":250} 0.25']);
  });

  it('tells its listener of each attempt and how it ended, and passes on the answer or the failure', async () => {
    const events: string[] = [];
    const admitted = admittedWith(events);
    const target = (name: string) => ({ model: 'up-model', definition: { name }, deployment: `${name}/up-model` });
    await expect(admitted.attempt(target('openai'), () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(
      admitted.attempt(target('groq'), () => {
        throw new Error('thrown at once');
      }),
    ).rejects.toThrow('thrown at once');
    await expect(admitted.attempt(target('mistral'), async () => 'answer')).resolves.toBe('answer');
    admitted.firstChunk();
    expect(events).toEqual(['attempt openai up-model', 'failed refused', 'attempt groq up-model', 'failed thrown at once', 'attempt mistral up-model', 'answered', 'first chunk']);
  });

  it('finishes once, however often it is told: the listener hears it, then the hold is released', () => {
    const events: string[] = [];
    const admitted = admittedWith(events);
    admitted.finish();
    admitted.finish();
    expect(events).toEqual(['finished', 'hold released']);
  });

  describe('the deployment that served it', () => {
    /**
     * A real response on a loopback server, answered by `answer` once it holds it: headers
     * set on a Node response are what the client reads, and one whose head left refuses them.
     */
    async function served(answer: (response: ServerResponse) => Promise<void>): Promise<Record<string, string | string[] | undefined>> {
      const server = createServer((_request, response) => {
        answer(response).catch((error: unknown) => response.destroy(error as Error));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        return await new Promise((resolve, reject) => {
          httpRequest({ host: '127.0.0.1', port, path: '/' }, (response) => {
            response.resume();
            response.on('end', () => resolve(response.headers));
          })
            .on('error', reject)
            .end();
        });
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }

    const paidCallWith = (context: Partial<RequestContext>): PaidCall => ({ ...call, context: { requestId: 'r1', ...context } });

    it('names the answering attempt on the call, the context and the answer, the failed ones nowhere but on the call', async () => {
      let paidCall: PaidCall | undefined;
      const headers = await served(async (response) => {
        paidCall = paidCallWith({ response });
        const admitted = admittedWith([], paidCall);
        await expect(admitted.attempt({ model: 'broken', definition: { name: 'groq' }, deployment: 'groq/broken' }, () => Promise.reject(new Error('500')))).rejects.toThrow('500');
        expect(paidCall.deployment).toBe('groq/broken');
        expect(paidCall.context!.deployment).toBeUndefined();
        expect(response.getHeader('x-gateway-deployment')).toBeUndefined();
        // The deployment a target names is the one recorded; without one, its connection and upstream model.
        await admitted.attempt({ model: 'gpt-4o', definition: { name: 'azure-eastus' }, deployment: 'azure-eastus/gpt-4o-prod' }, async () => 'answer');
        response.end('{}');
      });
      expect(headers['x-gateway-deployment']).toBe('azure-eastus/gpt-4o-prod');
      expect(paidCall!.deployment).toBe('azure-eastus/gpt-4o-prod');
      expect(paidCall!.context!.deployment).toBe('azure-eastus/gpt-4o-prod');
    });

    it('names it as <connection>/<upstream model> for a target that names no deployment', async () => {
      const headers = await served(async (response) => {
        await admittedWith([], paidCallWith({ response })).attempt({ model: 'text-embedding-3-small', definition: { name: 'openai' }, deployment: 'openai/text-embedding-3-small' }, async () => 'answer');
        response.end('{}');
      });
      expect(headers['x-gateway-deployment']).toBe('openai/text-embedding-3-small');
    });

    it('leaves an answer whose head already left as it went, and still records the deployment for the access log', async () => {
      let context: RequestContext | undefined;
      const headers = await served(async (response) => {
        response.flushHeaders();
        const paidCall = paidCallWith({ response });
        context = paidCall.context;
        await admittedWith([], paidCall).attempt({ model: 'gpt-4o-mini', definition: { name: 'openai' }, deployment: 'openai/gpt-4o-mini' }, async () => 'answer');
        response.end();
      });
      expect(headers['x-gateway-deployment']).toBeUndefined();
      expect(context!.deployment).toBe('openai/gpt-4o-mini');
    });

    it('percent-encodes what a header cannot carry, so an odd upstream name never fails an answered request', async () => {
      const headers = await served(async (response) => {
        await admittedWith([], paidCallWith({ response })).attempt({ model: 'modèle\u2019s\n', definition: { name: 'vllm' }, deployment: 'vllm/modèle\u2019s\n' }, async () => 'answer');
        response.end();
      });
      expect(headers['x-gateway-deployment']).toBe('vllm/mod%C3%A8le%E2%80%99s%0A');
    });

    it('records it on a call with no HTTP request behind it', async () => {
      const paidCall = { ...call };
      await admittedWith([], paidCall).attempt({ model: 'm', definition: { name: 'openai' }, deployment: 'openai/m' }, async () => 'answer');
      expect(paidCall.deployment).toBe('openai/m');
    });
  });
});
