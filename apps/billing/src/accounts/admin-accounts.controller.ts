import { Body, Controller, Get, HttpCode, HttpStatus, Param, Patch, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import { microToCredits } from '@igw/domain';
import { RequireAdminToken } from '@igw/platform';
import { CreatedKeyDto, CreateKeyDto } from '../keys/dto/create-key.dto';
import { KeysService } from '../keys/keys.service';
import { AccountsService } from './accounts.service';
import { AccountDto } from './dto/account.dto';
import { AddCreditsDto, BalanceAfterCreditDto } from './dto/add-credits.dto';
import { CreateAccountDto } from './dto/create-account.dto';
import { UpdateAccountDto } from './dto/update-account.dto';
import { AccountIdPipe } from './account-id.pipe';

@ApiTags('admin')
@RequireAdminToken()
@Controller('admin/v1/accounts')
export class AdminAccountsController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly keys: KeysService,
  ) {}

  @Post()
  @ApiCreatedResponse({ type: AccountDto })
  async create(@Body() body: CreateAccountDto): Promise<AccountDto> {
    return AccountDto.from(await this.accounts.create(body));
  }

  @Get(':id')
  @ApiOkResponse({ type: AccountDto })
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  async get(@Param('id', AccountIdPipe) id: string): Promise<AccountDto> {
    return AccountDto.from(await this.accounts.get(id));
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change account settings',
    description:
      'Only the fields sent change. A null requestsPerMinute or concurrentRequests removes the override. ' +
      'Gateways drop what they cached about the account as soon as the change is committed.',
  })
  @ApiOkResponse({ type: AccountDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto })
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  async update(@Param('id', AccountIdPipe) id: string, @Body() body: UpdateAccountDto): Promise<AccountDto> {
    return AccountDto.from(await this.accounts.update(id, body));
  }

  @Post(':id/keys')
  @ApiCreatedResponse({ type: CreatedKeyDto, description: 'The key is shown only in this response' })
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  async createKey(@Param('id', AccountIdPipe) id: string, @Body() body: CreateKeyDto): Promise<CreatedKeyDto> {
    return this.keys.create(id, body.name);
  }

  @Post(':id/credits')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: BalanceAfterCreditDto })
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  async addCredits(@Param('id', AccountIdPipe) id: string, @Body() body: AddCreditsDto): Promise<BalanceAfterCreditDto> {
    const balanceMicro = await this.accounts.addCredits(id, body.credits, body.reason);
    return { balance: microToCredits(balanceMicro) };
  }
}
