import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, MaxLength, ValidateBy, type ValidationArguments } from 'class-validator';
import { expectedOneOf, IsNumberField } from '@igw/validation';
import { AccountDto } from './account.dto';
import { decodeAccountCursor } from '../account-cursor';

export const DEFAULT_ACCOUNTS_PAGE_SIZE = 50;
export const MAX_ACCOUNTS_PAGE_SIZE = 200;
const STATUSES = ['active', 'suspended'] as const;
const PLANS = ['free', 'paid'] as const;

const toInteger = ({ value }: { value: unknown }): unknown => (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value);

export class ListAccountsQueryDto {
  @ApiPropertyOptional({ description: 'Accounts whose name contains this text (case-insensitive), or whose id is this id', example: 'acme' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;

  @ApiPropertyOptional({ enum: STATUSES })
  @IsOptional()
  @IsIn(STATUSES, { message: (args: ValidationArguments) => expectedOneOf(STATUSES, args.value) })
  status?: (typeof STATUSES)[number];

  @ApiPropertyOptional({ enum: PLANS })
  @IsOptional()
  @IsIn(PLANS, { message: (args: ValidationArguments) => expectedOneOf(PLANS, args.value) })
  plan?: (typeof PLANS)[number];

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_ACCOUNTS_PAGE_SIZE, default: DEFAULT_ACCOUNTS_PAGE_SIZE, description: 'Accounts per page' })
  @IsOptional()
  @Transform(toInteger)
  @IsNumberField({ integer: true, min: 1, max: MAX_ACCOUNTS_PAGE_SIZE })
  limit?: number;

  @ApiPropertyOptional({ description: "The previous page's nextCursor; leave out for the first (newest) page" })
  @IsOptional()
  @ValidateBy({
    name: 'isAccountCursor',
    validator: { validate: (value: unknown) => typeof value === 'string' && decodeAccountCursor(value) !== null, defaultMessage: () => 'Expected the nextCursor of a previous page' },
  })
  cursor?: string;
}

export class AccountListDto {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: [AccountDto], description: 'Newest first' }) data!: AccountDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as `cursor` for the next (older) page; null on the last page' }) nextCursor!: string | null;
}
