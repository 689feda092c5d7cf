import { keyShareBytes } from './media-fetcher';

const MiB = 1024 * 1024;

describe("a key's share of the fetched media a process holds", () => {
  it('is MEDIA_IN_FLIGHT_KEY_SHARE of the budget: half of 256 MiB by default', () => {
    expect(keyShareBytes({ MEDIA_IN_FLIGHT_MAX_BYTES: 256 * MiB, MEDIA_IN_FLIGHT_KEY_SHARE: 0.5, MEDIA_FETCH_MAX_BYTES: 25 * MiB })).toBe(128 * MiB);
    expect(keyShareBytes({ MEDIA_IN_FLIGHT_MAX_BYTES: 1_000_001, MEDIA_IN_FLIGHT_KEY_SHARE: 0.3, MEDIA_FETCH_MAX_BYTES: 1_024 })).toBe(300_000);
  });

  it('is never less than one file of the largest size, so a key alone can always fetch one', () => {
    expect(keyShareBytes({ MEDIA_IN_FLIGHT_MAX_BYTES: 750_000, MEDIA_IN_FLIGHT_KEY_SHARE: 0.5, MEDIA_FETCH_MAX_BYTES: 400_000 })).toBe(400_000);
    expect(keyShareBytes({ MEDIA_IN_FLIGHT_MAX_BYTES: 25 * MiB, MEDIA_IN_FLIGHT_KEY_SHARE: 0.5, MEDIA_FETCH_MAX_BYTES: 25 * MiB })).toBe(25 * MiB);
  });
});
