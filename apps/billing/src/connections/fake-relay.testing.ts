import type { GatewayUpstreams, TopicMap } from '@igw/messaging';

type Listener = (data: never) => void | Promise<void>;

/** The relay as the ask uses it: broadcasts delivered to every subscriber, on a later tick as over the wire. */
export class FakeRelay {
  private readonly listeners = new Map<string, Listener[]>();
  published: Array<{ topic: string; data: unknown }> = [];
  failPublish: Error | undefined;

  async subscribe<T extends keyof TopicMap>(topic: T, listener: (data: TopicMap[T]) => void | Promise<void>): Promise<void> {
    this.listeners.set(topic, [...(this.listeners.get(topic) ?? []), listener as Listener]);
  }

  async publish<T extends keyof TopicMap>(topic: T, data: TopicMap[T]): Promise<void> {
    if (this.failPublish) throw this.failPublish;
    this.published.push({ topic, data });
    for (const listener of this.listeners.get(topic) ?? []) setImmediate(() => void listener(data as never));
  }

  /** A gateway answering every ask after `delayMs` with this answer. */
  gateway(answer: GatewayUpstreams, delayMs = 0): void {
    void this.subscribe('gateway.upstreams.asked', ({ askId }) => {
      setTimeout(() => void this.publish('gateway.upstreams.answered', { askId, ...answer }), delayMs);
    });
  }
}
