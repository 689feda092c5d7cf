import { Controller, Get, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import { RequireAdminToken } from '@igw/http';
import { AccountsListService } from './accounts-list';
import { AccountListDto, ListAccountsQueryDto } from './dto/list-accounts.dto';

@ApiTags('admin')
@RequireAdminToken()
@Controller('admin/v1/accounts')
export class AdminAccountsListController {
  constructor(private readonly accounts: AccountsListService) {}

  @Get()
  @ApiOperation({
    summary: 'List accounts, newest first',
    description: 'Search by name (contains, case-insensitive) or exact id; filter by status and plan. Page with the nextCursor of the previous answer.',
  })
  @ApiOkResponse({ type: AccountListDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto, description: 'A query parameter is invalid' })
  list(@Query() query: ListAccountsQueryDto): Promise<AccountListDto> {
    return this.accounts.list(query);
  }
}
