import { Cancellation, UpstreamHttpError, UpstreamTimeoutError, UpstreamUnavailableError } from '@igw/providers';
import { UpstreamCallBilling } from './upstream-billing';

const RUNS_ON = { runsOnMs: 1_000 };

describe('UpstreamCallBilling: the rule for a client that leaves', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends nothing and bills nothing for a client gone before the call', async () => {
    const client = new Cancellation();
    const billing = new UpstreamCallBilling(client, RUNS_ON);
    client.abort();
    const send = jest.fn(async () => 'answer');
    await expect(billing.attempt(send)).rejects.toMatchObject({ name: 'AbortError' });
    expect(send).not.toHaveBeenCalled();
    expect(billing.signal.aborted).toBe(true);
    expect(billing.unreadUsage()).toBe('none');
  });

  it('lets a sent call run on after the client left, for at most the background limit', async () => {
    const client = new Cancellation();
    const billing = new UpstreamCallBilling(client, RUNS_ON);
    const pending = billing.attempt(
      (signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new DOMException('cut off', 'AbortError')))),
    );
    client.abort();
    expect(billing.signal.aborted).toBe(false);
    jest.advanceTimersByTime(999);
    expect(billing.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    // Cut off with no usage to read: the prompt is billed by estimate.
    expect(billing.unreadUsage()).toBe('prompt');
  });

  it('stops a call that stops with its client at once, even after sending, and bills its prompt', async () => {
    const client = new Cancellation();
    const billing = new UpstreamCallBilling(client, { stopsWithClient: true });
    const pending = billing.attempt((signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))));
    client.abort();
    expect(billing.signal.aborted).toBe(true);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(billing.unreadUsage()).toBe('prompt');
  });

  it('bills the prompt of a call that timed out after sending it, client there or not; not of one whose connection timed out', async () => {
    const present = new UpstreamCallBilling(new Cancellation(), RUNS_ON);
    await expect(present.attempt(async () => Promise.reject(new UpstreamTimeoutError('openai', 5, true)))).rejects.toThrow();
    expect(present.unreadUsage()).toBe('prompt');
    const unconnected = new UpstreamCallBilling(new Cancellation(), RUNS_ON);
    await expect(unconnected.attempt(async () => Promise.reject(new UpstreamTimeoutError('openai', 5, false)))).rejects.toThrow();
    expect(unconnected.unreadUsage()).toBe('none');
  });

  it('bills an estimate after a failure with no answer only when the client left; an error status is never billed', async () => {
    const present = new UpstreamCallBilling(new Cancellation(), RUNS_ON);
    await expect(present.attempt(async () => Promise.reject(new UpstreamUnavailableError('openai', 'ECONNRESET')))).rejects.toThrow();
    expect(present.unreadUsage()).toBe('none');

    // The call had gone out before the client left:
    const leaving = new Cancellation();
    const sent = new UpstreamCallBilling(leaving, RUNS_ON);
    await expect(
      sent.attempt(async () => {
        leaving.abort();
        throw new UpstreamUnavailableError('openai', 'ECONNRESET');
      }),
    ).rejects.toThrow();
    expect(sent.unreadUsage()).toBe('prompt');
    const leavingAgain = new Cancellation();
    const statused = new UpstreamCallBilling(leavingAgain, RUNS_ON);
    await expect(
      statused.attempt(async () => {
        leavingAgain.abort();
        throw new UpstreamHttpError('openai', 500, 'down');
      }),
    ).rejects.toThrow();
    expect(statused.unreadUsage()).toBe('none');
  });

  it('bills an answer the gateway refused to read (upstreamCharged), client there or not', async () => {
    const billing = new UpstreamCallBilling(new Cancellation(), RUNS_ON);
    const tooLarge = Object.assign(new Error('the answer is too large'), { upstreamCharged: true });
    await expect(billing.attempt(async () => Promise.reject(tooLarge))).rejects.toBe(tooLarge);
    expect(billing.unreadUsage()).toBe('answer-unread');
  });

  it('stops timing once closed', async () => {
    const client = new Cancellation();
    const billing = new UpstreamCallBilling(client, RUNS_ON);
    await billing.attempt(async () => 'done');
    billing.close();
    client.abort();
    jest.advanceTimersByTime(5_000);
    expect(billing.signal.aborted).toBe(false);
  });

  it('cuts a running call off at shutdown at once, billed as if its client had left, and tries no other source', async () => {
    const billing = new UpstreamCallBilling(new Cancellation(), { runsOnMs: 60_000 });
    const pending = billing.attempt(
      (signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new DOMException('cut off', 'AbortError')))),
    );
    billing.cutOff();
    expect(billing.signal.aborted).toBe(true);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(billing.unreadUsage()).toBe('prompt');
    const fallback = jest.fn(async () => 'answer');
    await expect(billing.attempt(fallback)).rejects.toMatchObject({ name: 'AbortError' });
    expect(fallback).not.toHaveBeenCalled();
  });

  it('leaves a call that is over alone at shutdown', async () => {
    const billing = new UpstreamCallBilling(new Cancellation(), RUNS_ON);
    await billing.attempt(async () => 'done');
    billing.close();
    billing.cutOff();
    expect(billing.signal.aborted).toBe(false);
  });
});
