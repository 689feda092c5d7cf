import type { AuthenticatedKey, CatalogueModel } from '@igw/contracts';
import { setLabelledModels, upstreamDuration } from '@igw/observability';
import type { RequestContext } from '@igw/http';
import type { PaidCall } from '../paid-requests/admitted-request';
import { creditsCharged, timeToFirstToken, tokensCounted } from './gateway-metrics';
import { RequestTelemetry } from './request-telemetry';

const model = { id: 'telemetry/model' } as CatalogueModel;
const auth = { keyId: 'k1', accountId: 'a1' } as AuthenticatedKey;

function callIn(context: RequestContext | undefined, endpoint = 'chat.completions'): PaidCall {
  return { requestId: 'r1', auth, endpoint, model, catalogueRevision: 1, context };
}

describe('RequestTelemetry: a paid request in the metrics and its access-log line', () => {
  beforeAll(() => setLabelledModels([model.id]));

  it('times each upstream attempt by endpoint, provider and outcome, and names the provider that answered', () => {
    const endpoint = 'telemetry.attempts';
    const failed = upstreamDuration.series(endpoint, 'openai', 'error').count;
    const answered = upstreamDuration.series(endpoint, 'groq', 'ok').count;
    const context = {} as RequestContext;
    const listener = new RequestTelemetry().admitted(callIn(context, endpoint));
    listener.attemptStarted('openai', 'gpt-x');
    listener.attemptFailed(new Error('refused'));
    expect(context.provider).toBeUndefined();
    listener.attemptStarted('groq', 'llama');
    listener.attemptAnswered();
    expect(upstreamDuration.series(endpoint, 'openai', 'error').count).toBe(failed + 1);
    expect(upstreamDuration.series(endpoint, 'groq', 'ok').count).toBe(answered + 1);
    expect(context.provider).toBe('groq');
  });

  it('counts the tokens and credits of each settlement by model, provider and endpoint, and sums them in the context', () => {
    const input = tokensCounted.series(model.id, 'mistral', 'input');
    const output = tokensCounted.series(model.id, 'mistral', 'output');
    const credits = creditsCharged.series(model.id, 'telemetry.settled');
    const [inputBefore, outputBefore, creditsBefore] = [input.value, output.value, creditsCharged.total(credits)];
    const context = {} as RequestContext;
    const listener = new RequestTelemetry().admitted(callIn(context, 'telemetry.settled'));
    listener.attemptStarted('mistral', 'small');
    listener.attemptAnswered();
    listener.settled({ input_tokens: 10, cached_input_tokens: 5, output_tokens: 20 }, 0.5);
    listener.settled({ input_tokens: 1 }, 0.25);
    listener.finished();
    expect([input.value - inputBefore, output.value - outputBefore, creditsCharged.total(credits) - creditsBefore]).toEqual([16, 20, 0.75]);
    expect(context).toMatchObject({ provider: 'mistral', inputTokens: 16, outputTokens: 20, credits: 0.75 });
  });

  it('sums credits exactly, in the counter and in the access-log line, where float addition would drift', () => {
    const credits = creditsCharged.series(model.id, 'telemetry.exact');
    const context = {} as RequestContext;
    const listener = new RequestTelemetry().admitted(callIn(context, 'telemetry.exact'));
    const charges = [0.1, 0.2];
    for (const charge of charges) listener.settled({ input_tokens: 1 }, charge);
    expect(charges.reduce((sum, charge) => sum + charge, 0)).toBe(0.30000000000000004);
    expect(creditsCharged.total(credits)).toBe(0.3);
    expect(context.credits).toBe(0.3);
  });

  it("observes a stream's first chunk from the request's arrival, under the provider that answered", () => {
    const series = timeToFirstToken.series(model.id, 'anthropic');
    const before = series.count;
    const listener = new RequestTelemetry().admitted(callIn({ startedAt: performance.now() } as RequestContext));
    listener.attemptStarted('anthropic', 'claude');
    listener.attemptAnswered();
    listener.firstChunk();
    expect(series.count).toBe(before + 1);
    // Without an HTTP request's arrival there is nothing to count from.
    const unanswered = timeToFirstToken.series(model.id, 'none');
    const unansweredBefore = unanswered.count;
    new RequestTelemetry().admitted(callIn(undefined)).firstChunk();
    expect(unanswered.count).toBe(unansweredBefore);
  });
});
