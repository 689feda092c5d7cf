import { chatUnits } from './chat-units';

describe('chatUnits', () => {
  const usage = { prompt_tokens: 1000, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 300 } };

  it('splits cached reads and writes out of input when the price list prices them', () => {
    expect(chatUnits(usage, new Set(['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_write_input_tokens']))).toEqual({
      input_tokens: 100,
      output_tokens: 50,
      cache_read_input_tokens: 600,
      cache_write_input_tokens: 300,
    });
  });

  it('bills cached tokens as input when the price list has no cache prices', () => {
    expect(chatUnits(usage, new Set(['input_tokens', 'output_tokens']))).toEqual({ input_tokens: 1000, output_tokens: 50 });
  });

  it('splits only what is priced', () => {
    expect(chatUnits(usage, new Set(['cache_read_input_tokens']))).toEqual({ input_tokens: 400, output_tokens: 50, cache_read_input_tokens: 600 });
  });

  it('splits one-hour cache writes out of the writes where the price list prices them apart', () => {
    const withHourWrites = { ...usage, prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 300, cache_write_1h_tokens: 200 } };
    const all = new Set(['cache_read_input_tokens', 'cache_write_input_tokens', 'cache_write_1h_input_tokens']);
    expect(chatUnits(withHourWrites, all)).toEqual({ input_tokens: 100, output_tokens: 50, cache_read_input_tokens: 600, cache_write_input_tokens: 100, cache_write_1h_input_tokens: 200 });
    // Unpriced apart, one-hour writes are cache writes; unpriced writes are input.
    expect(chatUnits(withHourWrites, new Set(['cache_write_input_tokens']))).toEqual({ input_tokens: 700, output_tokens: 50, cache_write_input_tokens: 300 });
    expect(chatUnits(withHourWrites, new Set(['cache_write_1h_input_tokens']))).toEqual({ input_tokens: 800, output_tokens: 50, cache_write_1h_input_tokens: 200 });
    // Never more one-hour writes than writes.
    const overstated = { ...usage, prompt_tokens_details: { cache_write_tokens: 300, cache_write_1h_tokens: 900 } };
    expect(chatUnits(overstated, all)).toEqual({ input_tokens: 700, output_tokens: 50, cache_write_1h_input_tokens: 300 });
  });

  it('reads usage without details', () => {
    expect(chatUnits({ prompt_tokens: 7, completion_tokens: 3 }, new Set(['cache_read_input_tokens']))).toEqual({ input_tokens: 7, output_tokens: 3 });
  });
});

describe('chatUnits: web search calls', () => {
  it('bills the searches an upstream reports as their own unit', () => {
    expect(chatUnits({ prompt_tokens: 7, completion_tokens: 3, web_search_calls: 2 }, new Set())).toEqual({ input_tokens: 7, output_tokens: 3, web_search_calls: 2 });
  });

  it('leaves the unit out when no search ran, or the count is not a whole number', () => {
    expect(chatUnits({ prompt_tokens: 7, completion_tokens: 3, web_search_calls: 0 }, new Set())).toEqual({ input_tokens: 7, output_tokens: 3 });
    expect(chatUnits({ prompt_tokens: 7, completion_tokens: 3, web_search_calls: 1.5 }, new Set())).toEqual({ input_tokens: 7, output_tokens: 3 });
  });
});
