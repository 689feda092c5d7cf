import type { RequestHold } from '../limits/request-admission';
import type { UsageCharging } from '../usage/usage-charging';
import { AdmittedRequest, type PaidCall, type PaidRequestListener } from './admitted-request';

const call = { requestId: 'r1', endpoint: 'chat.completions' } as PaidCall;

/** An admitted request whose hold, charging and listener write what they are told into `events`. */
function admittedWith(events: string[]) {
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
  return new AdmittedRequest(call, hold, charging, listener);
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
    const target = (name: string) => ({ model: 'up-model', definition: { name } });
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
});
