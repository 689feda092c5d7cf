import { ValidateBy, type ValidationArguments } from 'class-validator';
import { numberIssues } from '@igw/validation';

export const usdPresent = (_: object, value: unknown): boolean => value !== undefined;
export const usdAbsent = (dto: object): boolean => (dto as { usd?: unknown }).usd === undefined;

function usdIssues(value: unknown, args: ValidationArguments | undefined): string[] {
  if (((args?.object as { credits?: unknown } | undefined)?.credits ?? null) !== null) return ['Expected credits or usd, not both. Received both'];
  return numberIssues(value, {});
}

/**
 * `usd`: a finite number, and only without `credits` (one amount, one meaning). Its range and
 * precision depend on CREDITS_PER_USD, so they are checked at conversion (credit-amount.ts).
 */
export function IsUsdInsteadOfCredits(): PropertyDecorator {
  return ValidateBy({
    name: 'isUsdInsteadOfCredits',
    validator: {
      validate: (value: unknown, args?: ValidationArguments) => usdIssues(value, args).length === 0,
      defaultMessage: (args?: ValidationArguments) => usdIssues(args?.value, args).join('\n'),
    },
  });
}
