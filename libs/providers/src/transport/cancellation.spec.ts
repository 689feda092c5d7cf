import { Cancellation } from './cancellation';

describe('Cancellation', () => {
  it('runs each listener once, in order, on the first abort, with an AbortError as the reason', () => {
    const cancellation = new Cancellation();
    const heard: string[] = [];
    cancellation.addEventListener('abort', () => heard.push('first'));
    cancellation.addEventListener('abort', () => heard.push('second'));
    expect(cancellation.aborted).toBe(false);
    cancellation.abort();
    cancellation.abort();
    expect(heard).toEqual(['first', 'second']);
    expect(cancellation.aborted).toBe(true);
    expect(cancellation.reason).toMatchObject({ name: 'AbortError' });
  });

  it('does not run a removed listener, nor one added after the abort', () => {
    const cancellation = new Cancellation();
    const heard: string[] = [];
    const removed = () => heard.push('removed');
    cancellation.addEventListener('abort', removed);
    cancellation.removeEventListener('abort', removed);
    cancellation.abort(new Error('client gone'));
    cancellation.addEventListener('abort', () => heard.push('late'));
    expect(heard).toEqual([]);
    expect(cancellation.reason).toEqual(new Error('client gone'));
  });
});
