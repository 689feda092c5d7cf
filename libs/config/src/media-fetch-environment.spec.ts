import { EnvironmentError, loadEnvironment } from './environment';

describe('the media fetch settings', () => {
  it('default to 25 MiB, 30 s, no allowlist and 256 MiB held at once', () => {
    const { env } = loadEnvironment({});
    expect(env.MEDIA_FETCH_MAX_BYTES).toBe(25 * 1024 * 1024);
    expect(env.MEDIA_FETCH_TIMEOUT_MS).toBe(30_000);
    expect(env.MEDIA_FETCH_ALLOWLIST).toBeUndefined();
    expect(env.MEDIA_IN_FLIGHT_MAX_BYTES).toBe(256 * 1024 * 1024);
    expect(env.MEDIA_IN_FLIGHT_KEY_SHARE).toBe(0.5);
  });

  it('read numbers and a list of host and host:port entries', () => {
    const { env } = loadEnvironment({
      MEDIA_IN_FLIGHT_KEY_SHARE: '0.25',
      MEDIA_FETCH_MAX_BYTES: '1048576',
      MEDIA_FETCH_TIMEOUT_MS: '5000',
      MEDIA_FETCH_ALLOWLIST: 'minio.internal, 10.0.0.5:9000,[fd00::5]:9000',
    });
    expect(env.MEDIA_IN_FLIGHT_KEY_SHARE).toBe(0.25);
    expect(env.MEDIA_FETCH_MAX_BYTES).toBe(1_048_576);
    expect(env.MEDIA_FETCH_TIMEOUT_MS).toBe(5_000);
    expect(env.MEDIA_FETCH_ALLOWLIST).toBe('minio.internal, 10.0.0.5:9000,[fd00::5]:9000');
    expect(loadEnvironment({ MEDIA_FETCH_ALLOWLIST: '' }).env.MEDIA_FETCH_ALLOWLIST).toBeUndefined();
  });

  it.each([
    [{ MEDIA_FETCH_MAX_BYTES: 'lots' }, /MEDIA_FETCH_MAX_BYTES/],
    [{ MEDIA_FETCH_TIMEOUT_MS: '10' }, /MEDIA_FETCH_TIMEOUT_MS/],
    [{ MEDIA_FETCH_ALLOWLIST: 'http://minio.internal' }, /MEDIA_FETCH_ALLOWLIST must be a comma-separated list of host or host:port entries/],
    [{ MEDIA_FETCH_ALLOWLIST: 'fd00::5' }, /MEDIA_FETCH_ALLOWLIST/],
    [{ MEDIA_FETCH_ALLOWLIST: 'minio.internal;10.0.0.5' }, /MEDIA_FETCH_ALLOWLIST/],
    [{ MEDIA_IN_FLIGHT_MAX_BYTES: 'plenty' }, /MEDIA_IN_FLIGHT_MAX_BYTES/],
    [{ MEDIA_IN_FLIGHT_KEY_SHARE: '0' }, /MEDIA_IN_FLIGHT_KEY_SHARE/],
    [{ MEDIA_IN_FLIGHT_KEY_SHARE: '1.5' }, /MEDIA_IN_FLIGHT_KEY_SHARE/],
    [{ MEDIA_IN_FLIGHT_KEY_SHARE: 'half' }, /MEDIA_IN_FLIGHT_KEY_SHARE/],
    // A budget smaller than the largest file would refuse that file on an idle replica.
    [{ MEDIA_FETCH_MAX_BYTES: '1048576', MEDIA_IN_FLIGHT_MAX_BYTES: '1048575' }, /MEDIA_IN_FLIGHT_MAX_BYTES must be at least MEDIA_FETCH_MAX_BYTES/],
  ])('refuse %j', (source, message) => {
    expect(() => loadEnvironment(source)).toThrow(EnvironmentError);
    expect(() => loadEnvironment(source)).toThrow(message);
  });
});
