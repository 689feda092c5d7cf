import { Controller, Delete, Get, Param, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import { ApiErrorResponses, RequireAdminToken } from '@igw/http';
import { AccountIdPipe } from '../accounts/account-id.pipe';
import { AccountCacheStatsDto, CacheInvalidatedDto, CacheInvalidationQueryDto } from './dto/cache-admin.dto';
import { CACHE_INVALIDATION_TIMEOUT_MS, CACHE_STATS_DAYS, NO_GATEWAY_FOR_CACHE, ResponseCacheService } from './response-cache.service';

const NOT_FOUND = { 404: { description: 'No such account', messages: 'Account 7c9e6679-7425-40de-944b-e07fc1f90ae7 not found' } } as const;

@ApiTags('admin')
@RequireAdminToken()
@Controller('admin/v1')
export class AdminCacheController {
  constructor(private readonly cache: ResponseCacheService) {}

  @Delete('cache')
  @ApiOperation({
    summary: "Remove an account's response cache entries",
    description:
      "All of the account's entries, or only those of one model and/or one of its keys. The gateways hold the cache (one store for all of them): " +
      `billing asks one of them and answers with how many entries it removed, or 503 when none answers within ${CACHE_INVALIDATION_TIMEOUT_MS / 1000} s.`,
  })
  @ApiOkResponse({ type: CacheInvalidatedDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto, description: 'No account, a malformed id, or a key of another account' })
  @ApiErrorResponses({ ...NOT_FOUND, 503: { description: `No gateway answered within ${CACHE_INVALIDATION_TIMEOUT_MS / 1000} s`, messages: NO_GATEWAY_FOR_CACHE } })
  invalidate(@Query() query: CacheInvalidationQueryDto): Promise<CacheInvalidatedDto> {
    return this.cache.invalidate(query);
  }

  @Get('accounts/:id/cache')
  @ApiOperation({
    summary: "An account's response cache hits, misses and USD saved, in total and per key",
    description: `From the ledger's usage entries of the last ${CACHE_STATS_DAYS} days.`,
  })
  @ApiOkResponse({ type: AccountCacheStatsDto })
  @ApiErrorResponses(NOT_FOUND)
  stats(@Param('id', AccountIdPipe) id: string): Promise<AccountCacheStatsDto> {
    return this.cache.stats(id);
  }
}
