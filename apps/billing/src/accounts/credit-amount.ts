import { HttpStatus } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { formatScaled, MICRO_PER_CREDIT, parseDecimal, pow10, CREDIT_SCALE } from '@igw/domain';
import { GatewayException } from '@igw/http';
import { MAX_ADMIN_CREDITS } from '../billing.constants';

/** An admin amount as sent: credits, or USD converted at CREDITS_PER_USD (never both; the DTO checks that). */
export interface CreditAmountInput {
  credits?: number | null;
  usd?: number | null;
}

/**
 * The amount in credits, as an exact decimal string (creditsToMicro takes it without the
 * rounding a float would add). USD must convert to a whole number of micro-credits and stay
 * within the same bounds as `credits`, so both ways of asking move exactly the same ledger amount.
 */
export function creditsOf(input: CreditAmountInput, creditsPerUsd: number, minimumCredits: number): string | undefined {
  // A null amount is an absent one, as @IsOptional() lets it through.
  if (input.usd === undefined || input.usd === null) return input.credits === undefined || input.credits === null ? undefined : String(input.credits);
  const usd = parseDecimal(input.usd);
  const ratio = parseDecimal(creditsPerUsd);
  // micro = usd * ratio * 1e6, exact as a fraction units / 10^scale.
  const numerator = usd.units * ratio.units * MICRO_PER_CREDIT;
  const denominator = pow10(usd.scale + ratio.scale);
  const usdText = formatScaled(usd.units, usd.scale);
  if (numerator % denominator !== 0n) {
    throw invalidUsd(`Expected a USD amount worth a whole number of micro-credits at ${creditsPerUsd} credits per USD. Received ${usdText}`);
  }
  const micro = numerator / denominator;
  const maxMicro = BigInt(MAX_ADMIN_CREDITS) * MICRO_PER_CREDIT;
  const minMicro = BigInt(minimumCredits) * MICRO_PER_CREDIT;
  if (micro > maxMicro || micro < minMicro) {
    const maxUsd = MAX_ADMIN_CREDITS / creditsPerUsd;
    const minUsd = minimumCredits / creditsPerUsd;
    throw invalidUsd(`Expected a USD amount from ${minUsd} to ${maxUsd} (at ${creditsPerUsd} credits per USD). Received ${usdText}`);
  }
  return formatScaled(micro, CREDIT_SCALE);
}

const invalidUsd = (message: string): GatewayException =>
  new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} usd: ${message}`);
