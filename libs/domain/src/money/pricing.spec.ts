import { creditsToMicro, formatMicroCredits, microCreditsToUsd, microToCredits } from './credits';
import { formatScaled, parseDecimal } from './decimal';
import { priceUsage, promptTokensOf } from './pricing';

const gpt4oMini = {
  units: [
    { unit: 'input_tokens', price: 0.15, per: 1_000_000 },
    { unit: 'output_tokens', price: 0.6, per: 1_000_000 },
  ],
};

describe('parseDecimal', () => {
  it.each([
    ['0.15', 15n, 2],
    ['-3', -3n, 0],
    ['2.5e-7', 25n, 8],
    ['1e3', 1000n, 0],
  ])('reads %s exactly', (text, units, scale) => {
    expect(parseDecimal(text)).toEqual({ units, scale });
  });

  it('rejects what is not a decimal', () => {
    expect(() => parseDecimal('abc')).toThrow(RangeError);
    expect(() => parseDecimal(Number.NaN)).toThrow(RangeError);
  });
});

describe('priceUsage', () => {
  it('prices tokens with price and per read together, at 2,000,000 credits per USD', () => {
    // 1000 input tokens at $0.15/M = $0.00015 = 300 credits; 500 output at $0.6/M = $0.0003 = 600 credits.
    const priced = priceUsage(gpt4oMini, { input_tokens: 1000, output_tokens: 500 }, 2_000_000);
    expect(formatMicroCredits(priced.creditsMicro)).toBe('900');
    expect(priced.usd).toBe('0.00045');
  });

  it('prices one price list again at another credit ratio (it is prepared once per ratio)', () => {
    const usage = { input_tokens: 1000, output_tokens: 500 };
    expect(formatMicroCredits(priceUsage(gpt4oMini, usage, 2_000_000).creditsMicro)).toBe('900');
    expect(formatMicroCredits(priceUsage(gpt4oMini, usage, 1_000).creditsMicro)).toBe('0.45');
    expect(formatMicroCredits(priceUsage(gpt4oMini, usage, 2_000_000).creditsMicro)).toBe('900');
  });

  it('charges nothing for units the price list does not name', () => {
    const embeddings = { units: [{ unit: 'input_tokens', price: 0.02, per: 1_000_000 }] };
    const priced = priceUsage(embeddings, { input_tokens: 10, output_tokens: 99 }, 2_000_000);
    expect(formatMicroCredits(priced.creditsMicro)).toBe('0.4');
  });

  describe('prices for longer prompts (promptTokensAbove)', () => {
    // Gemini 2.5 Pro: dearer input, cache reads and output for prompts over 200,000 tokens; searches alike.
    const gemini25Pro = {
      units: [
        { unit: 'input_tokens', price: 1.25, per: 1_000_000 },
        { unit: 'input_tokens', price: 2.5, per: 1_000_000, promptTokensAbove: 200_000 },
        { unit: 'cache_read_input_tokens', price: 0.125, per: 1_000_000 },
        { unit: 'cache_read_input_tokens', price: 0.25, per: 1_000_000, promptTokensAbove: 200_000 },
        { unit: 'output_tokens', price: 10, per: 1_000_000 },
        { unit: 'output_tokens', price: 15, per: 1_000_000, promptTokensAbove: 200_000 },
        { unit: 'web_search_calls', price: 35, per: 1_000 },
      ],
    };
    const usd = (units: Record<string, number>) => priceUsage(gemini25Pro, units, 2_000_000).usd;

    it('charges the base prices up to the threshold, and the band\'s for every token of a longer prompt', () => {
      expect(usd({ input_tokens: 200_000, output_tokens: 1_000 })).toBe('0.26'); // 0.25 + 0.01
      expect(usd({ input_tokens: 200_001, output_tokens: 1_000 })).toBe('0.5150025'); // 200,001 × 2.5/M + 1,000 × 15/M
      expect(usd({ input_tokens: 200_001, output_tokens: 1_000, web_search_calls: 2 })).toBe('0.5850025');
    });

    it('measures the prompt by every *input_tokens unit: cache reads count toward the threshold', () => {
      expect(promptTokensOf({ input_tokens: 150_000, cache_read_input_tokens: 60_000, output_tokens: 9 })).toBe(210_000);
      // 150,000 × 2.5/M + 60,000 × 0.25/M: the band, though neither unit alone passes it.
      expect(usd({ input_tokens: 150_000, cache_read_input_tokens: 60_000 })).toBe('0.39');
    });

    it('takes the highest threshold the prompt passes, whatever the order of the list', () => {
      const stepped = {
        units: [
          { unit: 't_input_tokens', price: 3, per: 1_000_000, promptTokensAbove: 1_000 },
          { unit: 't_input_tokens', price: 1, per: 1_000_000 },
          { unit: 't_input_tokens', price: 2, per: 1_000_000, promptTokensAbove: 100 },
        ],
      };
      const credits = (tokens: number) => formatMicroCredits(priceUsage(stepped, { t_input_tokens: tokens }, 1_000_000).creditsMicro);
      expect([credits(100), credits(101), credits(1_000), credits(1_001)]).toEqual(['100', '202', '2000', '3003']);
    });
  });

  it('rounds once to the micro-credit, half away from zero', () => {
    // 1 token at $0.0000001/M = 2e-7 credits -> 0.2 micro-credits -> 0
    expect(priceUsage({ units: [{ unit: 't', price: 0.0000001, per: 1_000_000 }] }, { t: 1 }, 2_000_000).creditsMicro).toBe(0n);
    // 0.5 micro-credits rounds up to 1
    expect(priceUsage({ units: [{ unit: 't', price: 0.00000025, per: 1_000_000 }] }, { t: 1 }, 2_000_000).creditsMicro).toBe(1n);
  });

  it('agrees with an independent exact computation for random prices, pers and counts', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 500; i++) {
      const priceMicroUsd = Math.floor(random() * 100_000_000); // up to $100 in micro-USD
      const per = [1, 1000, 1_000_000][Math.floor(random() * 3)];
      const count = Math.floor(random() * 2_000_000);
      const price = formatScaled(BigInt(priceMicroUsd), 6);
      const priced = priceUsage({ units: [{ unit: 'x', price, per }] }, { x: count }, 2_000_000);
      // credits_micro = priceMicroUsd/1e6 * count * 2e6 * 1e6 / per = priceMicroUsd * count * 2e6 / per
      const numerator = BigInt(priceMicroUsd) * BigInt(count) * 2_000_000n;
      const expected = (numerator * 2n + BigInt(per)) / (2n * BigInt(per));
      expect(priced.creditsMicro).toBe(expected);
    }
  });

  it('fails loudly on a negative or fractional unit count', () => {
    expect(() => priceUsage(gpt4oMini, { input_tokens: -1 }, 2_000_000)).toThrow(RangeError);
    expect(() => priceUsage(gpt4oMini, { input_tokens: 1.5 }, 2_000_000)).toThrow(RangeError);
  });
});

describe('credits and USD', () => {
  it('round-trips credits through micro-credits exactly', () => {
    expect(creditsToMicro('1000')).toBe(1_000_000_000n);
    expect(creditsToMicro(-2.5)).toBe(-2_500_000n);
    expect(microToCredits(1_234_567n)).toBe(1.234567);
  });

  it('derives USD from the configured ratio', () => {
    expect(microCreditsToUsd(2_000_000_000_000n, 2_000_000)).toBe('1');
    expect(microCreditsToUsd(1n, 2_000_000)).toBe('0.0000000000005');
    expect(microCreditsToUsd(1_000_000n, 1_000)).toBe('0.001');
  });
});
