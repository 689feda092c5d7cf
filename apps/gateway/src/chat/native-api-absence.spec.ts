import { UpstreamHttpError, UpstreamUnavailableError } from '@igw/providers';
import { answeredRouteMissing, NATIVE_API_ABSENCE_MS, NativeApiAbsences } from './native-api-absence';

describe('NativeApiAbsences', () => {
  const vllm = { provider: 'vllm', model: 'served-model' };
  let clock = 0;
  const absences = () => new NativeApiAbsences(NATIVE_API_ABSENCE_MS, () => clock);

  beforeEach(() => {
    clock = 1_000_000;
  });

  it('remembers a source as lacking the API for ten minutes, then tries it again', () => {
    const memory = absences();
    expect(memory.lacks('responses', vllm)).toBe(false);
    expect(memory.remember('responses', vllm)).toBe(true);
    expect(memory.lacks('responses', vllm)).toBe(true);
    clock += NATIVE_API_ABSENCE_MS - 1;
    expect(memory.lacks('responses', vllm)).toBe(true);
    clock += 1;
    expect(memory.lacks('responses', vllm)).toBe(false);
    // Missing again after the while: remembered anew, and told as new (logged again).
    expect(memory.remember('responses', vllm)).toBe(true);
    expect(memory.lacks('responses', vllm)).toBe(true);
  });

  it('tells a second remembering of a known source as nothing new, without lengthening the while', () => {
    const memory = absences();
    memory.remember('responses', vllm);
    clock += NATIVE_API_ABSENCE_MS / 2;
    expect(memory.remember('responses', vllm)).toBe(false);
    clock += NATIVE_API_ABSENCE_MS / 2;
    expect(memory.lacks('responses', vllm)).toBe(false);
  });

  it('keeps each source and API apart', () => {
    const memory = absences();
    memory.remember('responses', vllm);
    expect(memory.lacks('responses', { provider: 'vllm', model: 'other-model' })).toBe(false);
    expect(memory.lacks('responses', { provider: 'openai', model: 'served-model' })).toBe(false);
    expect(memory.lacks('messages', vllm)).toBe(false);
  });
});

describe('answeredRouteMissing', () => {
  it('is a 404 or 405 answer, nothing else', () => {
    expect(answeredRouteMissing(new UpstreamHttpError('vllm', 404, 'Not Found'))).toBe(true);
    expect(answeredRouteMissing(new UpstreamHttpError('vllm', 405, 'Method Not Allowed'))).toBe(true);
    for (const status of [400, 401, 422, 429, 500, 502]) expect(answeredRouteMissing(new UpstreamHttpError('vllm', status, 'no'))).toBe(false);
    expect(answeredRouteMissing(new UpstreamUnavailableError('vllm', 'connection refused'))).toBe(false);
    expect(answeredRouteMissing(new Error('404'))).toBe(false);
  });
});
