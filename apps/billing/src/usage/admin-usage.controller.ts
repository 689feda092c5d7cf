import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import { RequireAdminToken } from '@igw/http';
import { AccountIdPipe } from '../accounts/account-id.pipe';
import { ListUsageQueryDto, UsageSummaryQueryDto } from './dto/usage-query.dto';
import { UsageListDto, UsageSummaryDto } from './dto/usage.dto';
import { UsageService } from './usage.service';

@ApiTags('admin')
@RequireAdminToken()
@Controller('admin/v1/accounts')
export class AdminUsageController {
  constructor(private readonly usage: UsageService) {}

  @Get(':id/usage')
  @ApiOperation({
    summary: "An account's ledger entries",
    description:
      'Usage (charges) and credit entries, newest first, filtered by time window (from inclusive, to exclusive, on occurredAt), ' +
      'model, key and kind. Page with the nextCursor of the previous answer.',
  })
  @ApiOkResponse({ type: UsageListDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto, description: 'A query parameter is invalid' })
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  list(@Param('id', AccountIdPipe) id: string, @Query() query: ListUsageQueryDto): Promise<UsageListDto> {
    return this.usage.list(id, query);
  }

  @Get(':id/usage/summary')
  @ApiOperation({
    summary: "An account's usage by UTC day or hour, and by model and/or key",
    description:
      'Requests, credits and USD spent (exact sums, positive) and metered units, per UTC day (or hour: granularity=hour) ' +
      'and per model and/or API key (groupBy, default model), with totals. Filters by model and key as the listing does.',
  })
  @ApiOkResponse({ type: UsageSummaryDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto, description: 'A query parameter is invalid' })
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  summary(@Param('id', AccountIdPipe) id: string, @Query() query: UsageSummaryQueryDto): Promise<UsageSummaryDto> {
    return this.usage.summary(id, query);
  }
}
