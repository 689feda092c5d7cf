import { Cancellation, UpstreamHttpError, UpstreamTimeoutError } from '@igw/providers';
import { UpstreamCallBilling } from './upstream-billing';

describe('UpstreamCallBilling: the rule for a client that leaves', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends nothing and bills nothing for a client gone before the call', async () => {
    const client = new Cancellation();
    const billing = new UpstreamCallBilling(client, 1_000);
    client.abort();
    const send = jest.fn(async () => 'answer');
    await expect(billing.attempt(send)).rejects.toMatchObject({ name: 'AbortError' });
    expect(send).not.toHaveBeenCalled();
    expect(billing.signal.aborted).toBe(true);
    expect(billing.unreadUsage()).toBe('none');
  });

  it('lets a sent call run on after the client left, for at most the background limit', async () => {
    const client = new Cancellation();
    const billing = new UpstreamCallBilling(client, 1_000);
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

  it('bills an estimate after a timeout only when the client left; an error status is never billed', async () => {
    const present = new UpstreamCallBilling(new Cancellation(), 1_000);
    await expect(present.attempt(async () => Promise.reject(new UpstreamTimeoutError('openai', 5)))).rejects.toThrow();
    expect(present.unreadUsage()).toBe('none');

    // The call had gone out before the client left:
    const leaving = new Cancellation();
    const sent = new UpstreamCallBilling(leaving, 1_000);
    await expect(
      sent.attempt(async () => {
        leaving.abort();
        throw new UpstreamTimeoutError('openai', 5);
      }),
    ).rejects.toThrow();
    expect(sent.unreadUsage()).toBe('prompt');
    const leavingAgain = new Cancellation();
    const statused = new UpstreamCallBilling(leavingAgain, 1_000);
    await expect(
      statused.attempt(async () => {
        leavingAgain.abort();
        throw new UpstreamHttpError('openai', 500, 'down');
      }),
    ).rejects.toThrow();
    expect(statused.unreadUsage()).toBe('none');
  });

  it('bills an answer the gateway refused to read (upstreamCharged), client there or not', async () => {
    const billing = new UpstreamCallBilling(new Cancellation(), 1_000);
    const tooLarge = Object.assign(new Error('the answer is too large'), { upstreamCharged: true });
    await expect(billing.attempt(async () => Promise.reject(tooLarge))).rejects.toBe(tooLarge);
    expect(billing.unreadUsage()).toBe('answer-unread');
  });

  it('stops timing once closed', async () => {
    const client = new Cancellation();
    const billing = new UpstreamCallBilling(client, 1_000);
    await billing.attempt(async () => 'done');
    billing.close();
    client.abort();
    jest.advanceTimersByTime(5_000);
    expect(billing.signal.aborted).toBe(false);
  });

  it('cuts a running call off at shutdown at once, billed as if its client had left, and tries no other source', async () => {
    const billing = new UpstreamCallBilling(new Cancellation(), 60_000);
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
    const billing = new UpstreamCallBilling(new Cancellation(), 1_000);
    await billing.attempt(async () => 'done');
    billing.close();
    billing.cutOff();
    expect(billing.signal.aborted).toBe(false);
  });
});
