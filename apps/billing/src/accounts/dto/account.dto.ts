import { ApiProperty } from '@nestjs/swagger';
import { microToCredits } from '@igw/domain';
import { ResponseCacheSettingsDto } from '../../cache/dto/response-cache-settings.dto';
import type { AccountEntity } from '../account.entity';

export class AccountDto {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'Credits' }) balance!: number;
  @ApiProperty({ enum: ['free', 'paid'] }) plan!: string;
  @ApiProperty({ description: 'Credits' }) lowBalanceThreshold!: number;
  @ApiProperty({ enum: ['active', 'suspended'] }) status!: string;
  @ApiProperty({ enum: ['enabled', 'disabled'] }) autoDebitStatus!: string;
  @ApiProperty({ type: 'integer', nullable: true, description: "Requests per minute per API key; null uses the gateway's default" })
  requestsPerMinute!: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: "Requests in flight at once per API key; null uses the gateway's default" })
  concurrentRequests!: number | null;
  @ApiProperty({ type: ResponseCacheSettingsDto, nullable: true, description: "The response cache for the account's keys as set; null: off unless a key turns it on" })
  cache!: ResponseCacheSettingsDto | null;
  @ApiProperty() createdAt!: string;
  @ApiProperty() updatedAt!: string;

  static from(account: AccountEntity): AccountDto {
    return {
      id: account.id,
      name: account.name,
      balance: microToCredits(BigInt(account.balanceMicro)),
      plan: account.plan,
      lowBalanceThreshold: microToCredits(BigInt(account.lowBalanceThresholdMicro)),
      status: account.status,
      autoDebitStatus: account.autoDebit,
      requestsPerMinute: account.rateLimitRpm,
      concurrentRequests: account.rateLimitConcurrency,
      cache: account.cache,
      createdAt: account.createdAt.toISOString(),
      updatedAt: account.updatedAt.toISOString(),
    };
  }
}
