/**
 * Exact decimal helpers on bigint. A decimal is a bigint `units` scaled by 10^scale.
 * Used for prices and credits so that sums never drift the way float sums do.
 */
export interface ScaledDecimal {
  units: bigint;
  scale: number;
}

const DECIMAL_PATTERN = /^(-)?(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i;

/**
 * Prices and ratios are parsed on every request, but a deployment has only so many of them:
 * each is parsed once. Bounded, so parsing arbitrary user input cannot grow it without end.
 */
const parsedDecimals = new Map<number | string, Readonly<ScaledDecimal>>();
const PARSED_DECIMALS_MAX = 4096;

/** Parses a finite number or a decimal string ("0.15", "-3", "2.5e-7") exactly. */
export function parseDecimal(value: number | string): Readonly<ScaledDecimal> {
  let parsed = parsedDecimals.get(value);
  if (parsed === undefined) {
    parsed = Object.freeze(parseDecimalText(value));
    if (parsedDecimals.size >= PARSED_DECIMALS_MAX) parsedDecimals.clear();
    parsedDecimals.set(value, parsed);
  }
  return parsed;
}

function parseDecimalText(value: number | string): ScaledDecimal {
  const text = typeof value === 'number' ? numberToText(value) : value.trim();
  const match = DECIMAL_PATTERN.exec(text);
  if (!match) throw new RangeError(`Not a decimal number: ${text}`);
  const [, sign, whole, fraction = '', exponentText] = match;
  const exponent = exponentText ? Number(exponentText) : 0;
  let digits = whole + fraction;
  let scale = fraction.length - exponent;
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  const units = BigInt(digits) * (sign ? -1n : 1n);
  return { units, scale };
}

function numberToText(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`Not a finite number: ${value}`);
  // The shortest round-trip representation is what the author of the price typed.
  return String(value);
}

const POWERS_OF_TEN = Array.from({ length: 64 }, (_, exponent) => 10n ** BigInt(exponent));

export const pow10 = (exponent: number): bigint => POWERS_OF_TEN[exponent] ?? 10n ** BigInt(exponent);

/** Divides and rounds half away from zero. */
export function divideRounded(numerator: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new RangeError('Division by zero');
  const negative = numerator < 0n !== denominator < 0n;
  const n = numerator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  const quotient = (n * 2n + d) / (2n * d);
  return negative ? -quotient : quotient;
}

/** Converts a scaled decimal to integer units of 10^-targetScale, rounding half away from zero. */
export function toScaledUnits(value: ScaledDecimal, targetScale: number): bigint {
  if (value.scale <= targetScale) return value.units * pow10(targetScale - value.scale);
  return divideRounded(value.units, pow10(value.scale - targetScale));
}

/** Formats integer units of 10^-scale as a plain decimal string without trailing zeros. */
export function formatScaled(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = scale > 0 ? digits.slice(digits.length - scale).replace(/0+$/, '') : '';
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
