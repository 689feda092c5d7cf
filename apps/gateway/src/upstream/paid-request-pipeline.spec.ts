import { Cancellation, UpstreamHttpError } from '@igw/providers';
import type { ServiceSettings } from '@igw/platform';
import type { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import type { RequestMeter } from '../limits/request-meter';
import { PaidRequestPipeline, type RequestPlan } from './paid-request-pipeline';
import type { UpstreamTarget } from './upstream-route';

/** Records what the pipeline asks of the meter, in order. */
function recordingMeter(events: string[]) {
  return {
    admit: jest.fn(async (_call: unknown, ceiling: Record<string, number>) => {
      events.push(`admit ${JSON.stringify(ceiling)}`);
      return {
        settle: (units: Record<string, number>) => (events.push(`settle ${JSON.stringify(units)}`), { credits_used: 1, usd_spent: 0.000001 }),
        finish: () => events.push('finish'),
        attempt: (_target: unknown, send: () => Promise<unknown>) => send(),
      };
    }),
  };
}

const settings = { env: { UPSTREAM_TIMEOUT_MS: 1_000 } } as unknown as ServiceSettings;
const target = { provider: 'openai', model: 'gpt-x', definition: { kind: 'openai' } } as unknown as UpstreamTarget;
const plan: RequestPlan = { endpoint: 'test', model: { id: 'm' } as RequestPlan['model'], catalogueRevision: 1, ceiling: { input_tokens: 10 }, targets: [target] };
const request = () => ({ requestId: 'r1', auth: { keyId: 'k', accountId: 'a' } as never, signal: new Cancellation() });

function pipelineWith(events: string[]) {
  return new PaidRequestPipeline({} as CatalogueSnapshotService, recordingMeter(events) as unknown as RequestMeter, settings);
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
    ['a check before the call refuses', { beforeCall: () => Promise.reject(new Error('too long')) }],
    [
      'a check alongside the call refuses at once',
      {
        checkAlongside: () => {
          throw new Error('too long');
        },
      },
    ],
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

  describe('a check alongside the call (a prompt counted in the token counting workers)', () => {
    /** A check whose verdict the test gives. */
    function pendingCheck() {
      let pass!: () => void;
      let refuse!: (error: Error) => void;
      const verdict = new Promise<void>((resolve, reject) => ((pass = resolve), (refuse = reject)));
      return { verdict, pass, refuse };
    }

    /** Refuses the check: the call's signal is aborted, nothing is settled, and the refusal is the outcome. */
    async function expectWithdrawnOnRefusal(check: ReturnType<typeof pendingCheck>, outcome: Promise<unknown>, upstreamSignal: Cancellation, events: string[]) {
      check.refuse(new Error('too long'));
      await expect(outcome).rejects.toThrow('too long');
      expect(upstreamSignal.aborted).toBe(true);
      expect(events).toEqual(['admit {"input_tokens":10}', 'finish']);
    }

    it('sends while the check runs, and answers only once it passed', async () => {
      const events: string[] = [];
      const check = pendingCheck();
      const answering = pipelineWith(events).run(request(), plan, {
        checkAlongside: () => check.verdict,
        send: async () => (events.push('send'), 'result'),
        unreadUnits: () => ({ input_tokens: 99 }),
        settle: (result, admitted) => (admitted.settle({ input_tokens: 3 }), result),
        deliver: (delivered) => void events.push(`deliver ${delivered}`),
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(events).toEqual(['admit {"input_tokens":10}', 'send']);
      check.pass();
      expect(await answering).toBe('result');
      expect(events).toEqual(['admit {"input_tokens":10}', 'send', 'settle {"input_tokens":3}', 'finish', 'deliver result']);
    });

    it('on a refusal cancels the call in flight and bills nothing of it, its client gone or not', async () => {
      for (const clientLeaves of [false, true]) {
        const events: string[] = [];
        const check = pendingCheck();
        const client = new Cancellation();
        let upstreamSignal: Cancellation | undefined;
        const answering = pipelineWith(events).run({ ...request(), signal: client }, plan, {
          checkAlongside: () => check.verdict,
          send: (_to, signal) =>
            new Promise((_resolve, reject) => {
              upstreamSignal = signal as Cancellation;
              signal.addEventListener('abort', () => reject(new Error('cancelled')));
            }),
          unreadUnits: () => ({ input_tokens: 99 }),
          settle: () => 'never',
        });
        await new Promise((resolve) => setImmediate(resolve));
        if (clientLeaves) client.abort();
        expect(upstreamSignal!.aborted).toBe(false);
        await expectWithdrawnOnRefusal(check, answering, upstreamSignal!, events);
      }
    });

    it('on a refusal after the upstream answered drops the answer unbilled, and closes an opened one', async () => {
      const events: string[] = [];
      const check = pendingCheck();
      let upstreamSignal: Cancellation | undefined;
      const opening = pipelineWith(events).open(request(), plan, {
        checkAlongside: () => check.verdict,
        send: async (_to, signal) => ((upstreamSignal = signal as Cancellation), 'an open stream'),
        unreadUnits: () => ({ input_tokens: 99 }),
      });
      await new Promise((resolve) => setImmediate(resolve));
      // The stream listens to the call's signal until it is over: aborting it closes the connection.
      await expectWithdrawnOnRefusal(check, opening, upstreamSignal!, events);
    });

    it('bills the unread estimate of a failed call only once the check passed', async () => {
      const events: string[] = [];
      const check = pendingCheck();
      const client = new Cancellation();
      const answering = pipelineWith(events).run({ ...request(), signal: client }, plan, {
        checkAlongside: () => check.verdict,
        send: () => (client.abort(), Promise.reject(new Error('connection reset'))),
        unreadUnits: () => ({ input_tokens: 99 }),
        settle: () => 'never',
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(events).toEqual(['admit {"input_tokens":10}']);
      check.pass();
      await expect(answering).rejects.toThrow('connection reset');
      expect(events).toEqual(['admit {"input_tokens":10}', 'settle {"input_tokens":99}', 'finish']);
    });
  });
});
