import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateBy, ValidateIf, type ValidationArguments } from 'class-validator';
import { IsNumberField, numberIssues } from '@igw/validation';
import { CREDIT_DECIMALS, MAX_ADMIN_CREDITS } from '../../billing.constants';

export const MAX_WEBHOOK_URL_LENGTH = 2_048;
export const MIN_WEBHOOK_SECRET_LENGTH = 16;
export const MAX_WEBHOOK_SECRET_LENGTH = 256;

/** What is wrong with a webhook URL: http or https, a host, no credentials (GET shows the URL; the secret is what authenticates). */
export function webhookUrlIssues(value: unknown): string[] {
  if (typeof value !== 'string') return [`Expected an http:// or https:// URL. Received ${value === undefined ? 'nothing' : value === null ? 'null' : typeof value}`];
  if (value.length > MAX_WEBHOOK_URL_LENGTH) return [`Expected at most ${MAX_WEBHOOK_URL_LENGTH} characters. Received ${value.length} characters`];
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [`Expected an http:// or https:// URL. Received '${value.slice(0, 100)}'`];
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return [`Expected an http:// or https:// URL. Received a ${url.protocol.replace(/:$/, '')}: URL`];
  if (url.hostname === '') return ['Expected an http:// or https:// URL with a host. Received none'];
  if (url.username !== '' || url.password !== '') return ['Expected a URL without a user name or password (the secret signs every event). Received credentials'];
  return [];
}

/** The secret is never quoted back, not even in an error: the message gives its length only. */
export function webhookSecretIssues(value: unknown): string[] {
  const expected = `a string of ${MIN_WEBHOOK_SECRET_LENGTH} to ${MAX_WEBHOOK_SECRET_LENGTH} characters`;
  if (typeof value !== 'string') return [`Expected ${expected}. Received ${value === null ? 'null' : typeof value}`];
  if (value.length < MIN_WEBHOOK_SECRET_LENGTH || value.length > MAX_WEBHOOK_SECRET_LENGTH) return [`Expected ${expected}. Received ${value.length} characters`];
  if (value.trim() !== value) return [`Expected ${expected} without leading or trailing spaces. Received a secret with them`];
  return [];
}

function thresholdUsdIssues(value: unknown, args: ValidationArguments | undefined): string[] {
  const threshold = (args?.object as { balanceThreshold?: unknown } | undefined)?.balanceThreshold;
  if (threshold !== undefined && threshold !== null) return ['Expected balanceThreshold or balanceThresholdUsd, not both. Received both'];
  return numberIssues(value, { min: 0 });
}

function Checked(name: string, issues: (value: unknown, args?: ValidationArguments) => string[]): PropertyDecorator {
  return ValidateBy({
    name,
    validator: {
      validate: (value: unknown, args?: ValidationArguments) => issues(value, args).length === 0,
      defaultMessage: (args?: ValidationArguments) => issues(args?.value, args).join('\n'),
    },
  });
}

const present = (_: object, value: unknown): boolean => value !== undefined;
const presentAndNotNull = (_: object, value: unknown): boolean => value !== undefined && value !== null;

export class SetWebhookDto {
  @ApiProperty({ description: 'Where events are POSTed: http:// or https://, chosen by the admin (billing calls it as it is)', example: 'https://hooks.example.com/gateway', maxLength: MAX_WEBHOOK_URL_LENGTH })
  @Checked('isWebhookUrl', webhookUrlIssues)
  url!: string;

  @ApiPropertyOptional({
    description: `The HMAC-SHA256 key of X-Gateway-Signature (${MIN_WEBHOOK_SECRET_LENGTH}-${MAX_WEBHOOK_SECRET_LENGTH} characters). Write-only: never returned. Required when the account has no webhook; left out, the current one stays.`,
    example: 'whsec_0123456789abcdef0123456789abcdef',
    writeOnly: true,
  })
  @ValidateIf(present)
  @Checked('isWebhookSecret', webhookSecretIssues)
  secret?: string;

  @ApiPropertyOptional({
    type: 'number',
    nullable: true,
    minimum: 0,
    maximum: MAX_ADMIN_CREDITS,
    description: 'Credits: balance.below_threshold is sent when the balance falls from at least this to under it. Null or left out: no balance alert.',
    example: 1_000_000,
  })
  @ValidateIf(presentAndNotNull)
  @IsNumberField({ min: 0, max: MAX_ADMIN_CREDITS, maxDecimals: CREDIT_DECIMALS })
  balanceThreshold?: number | null;

  @ApiPropertyOptional({ description: 'The threshold in USD instead of credits, converted exactly at CREDITS_PER_USD', minimum: 0, example: 0.5 })
  @ValidateIf(presentAndNotNull)
  @Checked('isThresholdUsd', thresholdUsdIssues)
  balanceThresholdUsd?: number | null;
}

export const MAX_WEBHOOK_EVENTS_LISTED = 200;

/** Query strings arrive as text: a whole number becomes a number, anything else stays for the validator to name. */
const toInteger = ({ value }: { value: unknown }): unknown => (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value);

export class WebhookEventsQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_WEBHOOK_EVENTS_LISTED, default: 50 })
  @Transform(toInteger)
  @ValidateIf(present)
  @IsNumberField({ integer: true, min: 1, max: MAX_WEBHOOK_EVENTS_LISTED })
  limit?: number;
}
