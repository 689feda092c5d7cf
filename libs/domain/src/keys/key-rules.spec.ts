import { budgetLimitMicro, formatSpend, modelAllowed, periodEndOf, periodStartOf } from './key-rules';

describe('key rules', () => {
  describe('periods, on UTC boundaries', () => {
    it('starts a day at UTC midnight and ends it 24 hours later', () => {
      const start = periodStartOf('day', new Date('2026-03-07T23:59:59.999Z'));
      expect(start.toISOString()).toBe('2026-03-07T00:00:00.000Z');
      expect(periodEndOf('day', start)?.toISOString()).toBe('2026-03-08T00:00:00.000Z');
      expect(periodStartOf('day', new Date('2026-03-08T00:00:00.000Z')).toISOString()).toBe('2026-03-08T00:00:00.000Z');
    });

    it('starts a month on its first day and ends it on the next month\'s, across years and leap days', () => {
      expect(periodStartOf('month', new Date('2028-02-29T12:00:00Z')).toISOString()).toBe('2028-02-01T00:00:00.000Z');
      expect(periodEndOf('month', new Date('2028-02-01T00:00:00Z'))?.toISOString()).toBe('2028-03-01T00:00:00.000Z');
      expect(periodEndOf('month', periodStartOf('month', new Date('2026-12-31T23:59:59Z')))?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    });

    it('never resets a lifetime budget', () => {
      expect(periodStartOf('lifetime', new Date('2026-05-05T05:05:05Z')).getTime()).toBe(0);
      expect(periodEndOf('lifetime', new Date(0))).toBeNull();
    });
  });

  describe('money', () => {
    it('converts a credits budget exactly and a USD budget at the ratio, rounding down', () => {
      expect(budgetLimitMicro('25.00', 'credits', 2_000_000)).toBe(25_000_000n);
      expect(budgetLimitMicro('0.000001', 'credits', 2_000_000)).toBe(1n);
      expect(budgetLimitMicro('25.00', 'usd', 2_000_000)).toBe(50_000_000_000_000n);
      // 1e-13 USD is a fifth of a micro-credit at 2,000,000 credits per USD: rounded down to nothing.
      expect(budgetLimitMicro('0.0000000000001', 'usd', 2_000_000)).toBe(0n);
      expect(budgetLimitMicro('1', 'usd', 1.5)).toBe(1_500_000n);
      expect(budgetLimitMicro('0.1', 'usd', 3)).toBe(300_000n);
    });

    it('shows a spend in the budget\'s unit without float drift', () => {
      expect(formatSpend(1_234_567n, '0.617283500000000', 'credits')).toBe('1.234567');
      expect(formatSpend(1_234_567n, '0.617283500000000', 'usd')).toBe('0.6172835');
      expect(formatSpend(0n, '0', 'usd')).toBe('0');
    });
  });

  describe('model allowlists', () => {
    const sonnet = { id: 'anthropic/claude-sonnet-5-5', aliases: ['claude-sonnet-5-5'] };
    const mini = { id: 'openai/gpt-4.1-mini', aliases: ['gpt-4.1-mini'] };

    it('matches ids and aliases exactly, case-insensitively', () => {
      expect(modelAllowed(['anthropic/claude-sonnet-5-5'], sonnet)).toBe(true);
      expect(modelAllowed(['CLAUDE-sonnet-5-5'], sonnet)).toBe(true);
      expect(modelAllowed(['claude-sonnet-5'], sonnet)).toBe(false);
      expect(modelAllowed(['gpt-4.1-mini'], sonnet)).toBe(false);
      expect(modelAllowed([], mini)).toBe(false);
    });

    it('matches patterns against the id, a star being any run of characters', () => {
      expect(modelAllowed(['anthropic/*'], sonnet)).toBe(true);
      expect(modelAllowed(['anthropic/*'], mini)).toBe(false);
      expect(modelAllowed(['*mini'], mini)).toBe(true);
      expect(modelAllowed(['*/gpt-*-mini'], mini)).toBe(true);
      expect(modelAllowed(['*/gpt-*-nano'], mini)).toBe(false);
      expect(modelAllowed(['*'], mini)).toBe(true);
      // A pattern is not a prefix: the rest must match too.
      expect(modelAllowed(['openai/gpt-4.1'], mini)).toBe(false);
      expect(modelAllowed(['openai/*-mini-*'], mini)).toBe(false);
    });

    it('stays linear on hostile patterns', () => {
      const started = Date.now();
      expect(modelAllowed(['*a'.repeat(100) + 'b'], { id: 'a'.repeat(200), aliases: [] })).toBe(false);
      expect(Date.now() - started).toBeLessThan(100);
    });
  });
});
