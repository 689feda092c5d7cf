import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';

/** Which response cache entries DELETE /admin/v1/cache removes: an account's, of one model and/or one key. */
export class CacheInvalidationQueryDto {
  @ApiProperty({ format: 'uuid', description: 'The account whose entries are removed' })
  @IsUUID('all', { message: 'Expected an account id (a UUID)' })
  account!: string;

  @ApiPropertyOptional({ description: "Only the entries of this model id, as requests named it after alias resolution (the ledger's model)", example: 'openai/gpt-4o-mini' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(300)
  model?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Only the entries this API key stored (a key of the account)' })
  @IsOptional()
  @IsUUID('all', { message: 'Expected an API key id (a UUID)' })
  key?: string;
}

export class CacheInvalidatedDto {
  @ApiProperty({ type: 'integer', description: 'How many entries the gateways removed', example: 12 })
  removed!: number;
}

export class CacheCountsDto {
  @ApiProperty({ type: 'integer', description: 'Requests answered from the response cache' }) hits!: number;
  @ApiProperty({ type: 'integer', description: 'Requests looked up in the cache, not found there, and stored' }) misses!: number;
  @ApiProperty({ description: 'What the hits would have cost at full prices minus what they were charged, USD, exact decimal string', example: '0.0042' })
  savedUsd!: string;
}

export class KeyCacheCountsDto extends CacheCountsDto {
  @ApiProperty({ format: 'uuid' }) keyId!: string;
}

export class AccountCacheStatsDto {
  @ApiProperty({ description: 'Start of the window counted (usage that occurred at or after it), ISO 8601' }) from!: string;
  @ApiProperty({ type: CacheCountsDto, description: "The account's hits, misses and saving in the window" }) account!: CacheCountsDto;
  @ApiProperty({ type: [KeyCacheCountsDto], description: 'The same per key, for the keys with cache traffic in the window' }) keys!: KeyCacheCountsDto[];
}
