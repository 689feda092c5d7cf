import { Cancellation, InMemoryDeploymentStore, UpstreamHttpError, UpstreamTimeoutError } from '@igw/providers';
import type { ServiceSettings } from '@igw/config';
import type { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import type { RequestAdmission, RequestHold } from '../limits/request-admission';
import { RequestTelemetry } from '../telemetry/request-telemetry';
import type { UsageCharging } from '../usage/usage-charging';
import { PaidRequestPipeline, type RequestPlan } from './paid-request-pipeline';
import type { UpstreamTarget } from './upstream-route';
import { UpstreamEstate } from './upstream-estate';

/** Admission and charging that record what the pipeline asks of them, in order. */
function recording(events: string[]) {
  const hold = { spend: () => undefined, release: () => events.push('finish') } as unknown as RequestHold;
  const admission = {
    admit: jest.fn(async (_call: unknown, ceiling: Record<string, number>) => (events.push(`admit ${JSON.stringify(ceiling)}`), hold)),
  } as unknown as RequestAdmission;
  const charging = {
    charge: (_call: unknown, units: Record<string, number>) => (events.push(`settle ${JSON.stringify(units)}`), { usage: { credits_used: 1, usd_spent: 0.000001 }, creditsMicro: 1n }),
  } as unknown as UsageCharging;
  return { admission, charging };
}

const settings = { env: { UPSTREAM_TIMEOUT_MS: 1_000, UPSTREAM_STREAM_MAX_MS: 1_000 }, providers: {} } as unknown as ServiceSettings;
const target = { provider: 'openai', model: 'gpt-x', definition: { kind: 'openai' }, deployment: 'openai/gpt-x', weight: 1, tier: 0, quotas: {} } as unknown as UpstreamTarget;
const plan: RequestPlan = { endpoint: 'test', model: { id: 'm', routing: { sources: [] } } as unknown as RequestPlan['model'], catalogueRevision: 1, ceiling: { input_tokens: 10 }, targets: [target] };
const request = () => ({ requestId: 'r1', auth: { keyId: 'k', accountId: 'a' } as never, signal: new Cancellation() });

function pipelineWith(events: string[]) {
  const { admission, charging } = recording(events);
  const catalogue = {} as CatalogueSnapshotService;
  return new PaidRequestPipeline(catalogue, admission, charging, new RequestTelemetry(), new UpstreamEstate(settings, new InMemoryDeploymentStore(), catalogue), settings);
}

describe('PaidRequestPipeline: the steps every paid endpoint runs', () => {
  it('admits, checks, calls and settles, gives the slot and hold back, then delivers', async () => {
    const events: string[] = [];
    const answer = await pipelineWith(events).run(request(), plan, {
      beforeCall: () => void events.push('check'),
      send: async (to) => (events.push(`send ${to.provider}`), 'result'),
      unreadUnits: () => ({ input_tokens: 99 }),
      settle: (result, admitted) => (admitted.settle({ input_tokens: 3 }), `${result}!`),
      deliver: (delivered, clientGone) => void events.push(`deliver ${delivered} ${clientGone}`),
    });
    expect(answer).toBe('result!');
    expect(events).toEqual(['admit {"input_tokens":10}', 'check', 'send openai', 'settle {"input_tokens":3}', 'finish', 'deliver result! false']);
  });

  it.each([
    [
      'a check before the call refuses at once',
      {
        beforeCall: (): void => {
          throw new Error('too long');
        },
      },
    ],
    ['a check counted in the workers refuses', { beforeCall: () => new Promise<void>((_resolve, reject) => setTimeout(() => reject(new Error('too long')), 20)) }],
  ])('sends nothing when %s, and still finishes', async (_name, check) => {
    const events: string[] = [];
    const send = jest.fn();
    await expect(
      pipelineWith(events).run(request(), plan, {
        ...check,
        send,
        unreadUnits: () => ({ input_tokens: 99 }),
        settle: () => 'never',
      }),
    ).rejects.toThrow('too long');
    expect(send).not.toHaveBeenCalled();
    expect(events).toEqual(['admit {"input_tokens":10}', 'finish']);
  });

  it('bills the unread estimate of a forwarded call the other side processed, and nothing when the endpoint says so', async () => {
    const charged: string[] = [];
    const processed = Object.assign(new Error('timed out after the worker started'), { upstreamCharged: true });
    await expect(
      pipelineWith(charged).run(request(), { ...plan, targets: undefined }, {
        forward: () => Promise.reject(processed),
        unreadUnits: (unread) => (unread === 'answer-unread' ? { input_tokens: 7 } : undefined),
        settle: () => 'never',
      }),
    ).rejects.toBe(processed);
    expect(charged).toEqual(['admit {"input_tokens":10}', 'settle {"input_tokens":7}', 'finish']);

    const client = new Cancellation();
    const notCharged: string[] = [];
    await expect(
      pipelineWith(notCharged).run({ ...request(), signal: client }, { ...plan, targets: undefined }, {
        forward: () => (client.abort(), Promise.reject(new Error('queue down'))),
        unreadUnits: (unread) => (unread === 'answer-unread' ? { input_tokens: 7 } : undefined),
        settle: () => 'never',
      }),
    ).rejects.toThrow('queue down');
    expect(notCharged).toEqual(['admit {"input_tokens":10}', 'finish']);
  });

  it('hands an opened call over until released, and releases a call that failed to open', async () => {
    const events: string[] = [];
    const pipeline = pipelineWith(events);
    const opened = await pipeline.open(request(), plan, { send: async () => 'stream', unreadUnits: () => undefined });
    expect(opened.result).toBe('stream');
    expect(events).toEqual(['admit {"input_tokens":10}']);
    opened.admitted.settle({ output_tokens: 2 });
    opened.release();
    expect(events).toEqual(['admit {"input_tokens":10}', 'settle {"output_tokens":2}', 'finish']);

    const failed: string[] = [];
    await expect(
      pipelineWith(failed).open(request(), plan, { send: () => Promise.reject(new UpstreamHttpError('openai', 400, 'bad request')), unreadUnits: () => ({ input_tokens: 1 }) }),
    ).rejects.toMatchObject({ status: 400 });
    // An upstream that answered with an error status did not process the prompt: nothing billed.
    expect(failed).toEqual(['admit {"input_tokens":10}', 'finish']);
  });

  it('is waited for at shutdown, and cut off past the drain time: the call ends, billed by estimate, and it is settled', async () => {
    const events: string[] = [];
    const pipeline = pipelineWith(events);
    let sent!: () => void;
    const sending = new Promise<void>((resolve) => (sent = resolve));
    const running = pipeline.run(request(), plan, {
      send: (_to, signal) =>
        new Promise((_resolve, reject) => {
          sent();
          signal.addEventListener('abort', () => reject(new DOMException('cut off', 'AbortError')));
        }),
      unreadUnits: (unread) => (unread === 'prompt' ? { input_tokens: 7 } : undefined),
      settle: () => 'never',
    });
    await sending;
    expect(pipeline.running()).toBe(1);
    await expect(pipeline.settled(Date.now() + 20)).resolves.toBe(false);
    const settled = pipeline.settled(Date.now() + 5_000);
    pipeline.cutOff();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    await expect(settled).resolves.toBe(true);
    expect(pipeline.running()).toBe(0);
    expect(events).toEqual(['admit {"input_tokens":10}', 'settle {"input_tokens":7}', 'finish']);
  });

  it('waits for usage counted in the workers (settle or the unread estimate) before the slot and hold are given back', async () => {
    const events: string[] = [];
    const counted = (tokens: number) => new Promise<number>((resolve) => setTimeout(() => resolve(tokens), 20));
    await pipelineWith(events).run(request(), plan, {
      send: async () => 'result',
      unreadUnits: () => ({ input_tokens: 99 }),
      settle: async (result, admitted) => (admitted.settle({ input_tokens: await counted(5) }), result),
      deliver: (delivered) => void events.push(`deliver ${delivered}`),
    });
    expect(events).toEqual(['admit {"input_tokens":10}', 'settle {"input_tokens":5}', 'finish', 'deliver result']);

    const unread: string[] = [];
    const processed = Object.assign(new Error('answer too large'), { upstreamCharged: true });
    await expect(
      pipelineWith(unread).run(request(), plan, {
        send: () => Promise.reject(processed),
        unreadUnits: () => counted(7).then((tokens) => ({ input_tokens: tokens })),
        settle: () => 'never',
      }),
    ).rejects.toBe(processed);
    expect(unread).toEqual(['admit {"input_tokens":10}', 'settle {"input_tokens":7}', 'finish']);
  });

  it('sends only once a check counted in the workers passed', async () => {
    const events: string[] = [];
    let pass!: () => void;
    const answering = pipelineWith(events).run(request(), plan, {
      beforeCall: () => new Promise<void>((resolve) => (pass = resolve)),
      send: async () => (events.push('send'), 'result'),
      unreadUnits: () => ({ input_tokens: 99 }),
      settle: (result, admitted) => (admitted.settle({ input_tokens: 3 }), result),
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['admit {"input_tokens":10}']);
    pass();
    expect(await answering).toBe('result');
    expect(events).toEqual(['admit {"input_tokens":10}', 'send', 'settle {"input_tokens":3}', 'finish']);
  });

  it('stops a call that stops with its client as soon as the client leaves, while it opens, and bills the prompt', async () => {
    const events: string[] = [];
    const client = new Cancellation();
    let upstreamSignal: Cancellation | undefined;
    const opening = pipelineWith(events).open({ ...request(), signal: client }, { ...plan, targets: [target, target], whenClientLeaves: { stopsWithClient: true } }, {
      send: (_to, signal) =>
        new Promise((_resolve, reject) => {
          events.push('send');
          upstreamSignal = signal as Cancellation;
          signal.addEventListener('abort', () => reject(signal.reason));
        }),
      unreadUnits: (unread) => (unread === 'prompt' ? { input_tokens: 7 } : undefined),
    });
    await new Promise((resolve) => setImmediate(resolve));
    client.abort();
    expect(upstreamSignal!.aborted).toBe(true);
    await expect(opening).rejects.toMatchObject({ name: 'AbortError' });
    expect(events).toEqual(['admit {"input_tokens":10}', 'send', 'settle {"input_tokens":7}', 'finish']);
  });

  it('bills the prompt of a call that timed out after sending it, and tries no other source', async () => {
    const events: string[] = [];
    const timeout = new UpstreamTimeoutError('openai', 1_000, true);
    const second = { ...target, provider: 'groq', deployment: 'groq/gpt-x', tier: 1 } as UpstreamTarget;
    await expect(
      pipelineWith(events).run(request(), { ...plan, targets: [target, second] }, {
        send: (to) => (events.push(`send ${to.provider}`), Promise.reject(timeout)),
        unreadUnits: (unread) => (unread === 'prompt' ? { input_tokens: 7 } : undefined),
        settle: () => 'never',
      }),
    ).rejects.toMatchObject({ status: 504 });
    expect(events).toEqual(['admit {"input_tokens":10}', 'send openai', 'settle {"input_tokens":7}', 'finish']);

    // A connection that timed out sent nothing: the next source is tried, and nothing is billed for the first.
    const unsent: string[] = [];
    await expect(
      pipelineWith(unsent).run(request(), { ...plan, targets: [target, second] }, {
        send: (to) => (unsent.push(`send ${to.provider}`), to === second ? Promise.resolve('result') : Promise.reject(new UpstreamTimeoutError('openai', 1_000, false))),
        unreadUnits: (unread) => (unread === 'prompt' ? { input_tokens: 7 } : undefined),
        settle: (result) => result,
      }),
    ).resolves.toBe('result');
    expect(unsent).toEqual(['admit {"input_tokens":10}', 'send openai', 'send groq', 'finish']);
  });

  it('answers 429 with retry-after, sending nothing, while the only deployment is cooling after a 429', async () => {
    const events: string[] = [];
    const pipeline = pipelineWith(events);
    const limited = { send: () => Promise.reject(new UpstreamHttpError('openai', 429, 'slow down', 7)), unreadUnits: () => undefined, settle: () => 'never' };
    await expect(pipeline.run(request(), plan, limited)).rejects.toMatchObject({ status: 429 });
    let sent = 0;
    const refused = await pipeline.run(request(), plan, { send: async () => (sent++, 'never'), unreadUnits: () => undefined, settle: () => 'never' }).catch((error: unknown) => error);
    // The upstream's own retry-after, counted down: 7 s then, 6 or 7 now.
    expect(refused).toMatchObject({ status: 429, headers: { 'retry-after': expect.stringMatching(/^[67]$/) } });
    expect(sent).toBe(0);
  });

  it('holds the answering deployment\'s place until the request finishes, and settles its tokens on what was used', async () => {
    const store = new InMemoryDeploymentStore();
    const { admission, charging } = recording([]);
    const catalogue = {} as CatalogueSnapshotService;
    const pipeline = new PaidRequestPipeline(catalogue, admission, charging, new RequestTelemetry(), new UpstreamEstate(settings, store, catalogue), settings);
    const opened = await pipeline.open(request(), { ...plan, ceiling: { input_tokens: 10, output_tokens: 90 } }, { send: async () => 'stream', unreadUnits: () => undefined });
    const [during] = await store.snapshot(['openai/gpt-x']);
    expect(during).toMatchObject({ inFlight: 1, requestsThisMinute: 1, tokensThisMinute: 100 });
    opened.admitted.settle({ input_tokens: 10, output_tokens: 5 });
    opened.release();
    const [after] = await store.snapshot(['openai/gpt-x']);
    expect(after).toMatchObject({ inFlight: 0, requestsThisMinute: 1, tokensThisMinute: 15 });
  });
});
