import type { CallOptions, ChatAdapter, ProviderTarget } from './provider.types';
import type { ProviderKind } from './provider-definition';
import { UpstreamUnavailableError } from './upstream.errors';

/**
 * The chat adapter of a kind with no chat API. A catalogue source should never send chat there;
 * if one does, the attempt fails like an unreachable source, so the fallback chain moves on.
 */
export class NoChatAdapter implements ChatAdapter {
  constructor(private readonly kind: ProviderKind) {}

  async chat(target: ProviderTarget, _request: unknown, _options: CallOptions): Promise<never> {
    throw new UpstreamUnavailableError(target.provider, `a ${this.kind} provider has no chat completions API`);
  }

  async stream(target: ProviderTarget, _request: unknown, _options: CallOptions): Promise<never> {
    throw new UpstreamUnavailableError(target.provider, `a ${this.kind} provider has no chat completions API`);
  }
}
