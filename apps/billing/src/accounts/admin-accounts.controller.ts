import { Body, Controller, Get, HttpCode, HttpStatus, Inject, Param, Patch, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import { microToCredits } from '@igw/domain';
import { ApiErrorResponses, RequireAdminToken } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { MAX_ADMIN_CREDITS } from '../billing.constants';
import { KeyDto } from '../keys/dto/key.dto';
import { CreatedKeyDto, CreateKeyDto } from '../keys/dto/create-key.dto';
import { KeysService } from '../keys/keys.service';
import { AccountsService } from './accounts.service';
import { AccountDto } from './dto/account.dto';
import { AddCreditsDto, BalanceAfterCreditDto } from './dto/add-credits.dto';
import { CreateAccountDto } from './dto/create-account.dto';
import { UpdateAccountDto } from './dto/update-account.dto';
import { AccountIdPipe } from './account-id.pipe';
import { creditsOf } from './credit-amount';

@ApiTags('admin')
@RequireAdminToken()
@Controller('admin/v1/accounts')
export class AdminAccountsController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly keys: KeysService,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create an account with its plan and starting credits' })
  @ApiCreatedResponse({ type: AccountDto })
  async create(@Body() body: CreateAccountDto): Promise<AccountDto> {
    const { usd: _usd, ...settings } = body;
    return AccountDto.from(await this.accounts.create({ ...settings, credits: creditsOf(body, this.settings.env.CREDITS_PER_USD, 0) }));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One account: plan, status, balance and limits' })
  @ApiOkResponse({ type: AccountDto })
  @ApiErrorResponses({ 404: { description: 'No such account', messages: 'Account 7c9e6679-7425-40de-944b-e07fc1f90ae7 not found' } })
  async get(@Param('id', AccountIdPipe) id: string): Promise<AccountDto> {
    return AccountDto.from(await this.accounts.get(id));
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change account settings',
    description:
      'Only the fields sent change. A null requestsPerMinute or concurrentRequests removes the override; a null cache removes the response cache setting. ' +
      'Gateways drop what they cached about the account as soon as the change is committed.',
  })
  @ApiOkResponse({ type: AccountDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto })
  @ApiErrorResponses({ 404: { description: 'No such account', messages: 'Account 7c9e6679-7425-40de-944b-e07fc1f90ae7 not found' } })
  async update(@Param('id', AccountIdPipe) id: string, @Body() body: UpdateAccountDto): Promise<AccountDto> {
    return AccountDto.from(await this.accounts.update(id, body));
  }

  @Post(':id/keys')
  @ApiOperation({
    summary: 'Create an API key for the account (shown once), with its own rules',
    description: 'Rules (all optional): name, metadata, budget {limit, unit usd|credits, period day|month|lifetime}, models (ids, aliases or patterns like anthropic/*), rpm, concurrency, expiresAt, cache {enabled, ttlSeconds, maxTtlSeconds, scope account|key} over the account\'s.',
  })
  @ApiBadRequestResponse({ type: ErrorBodyDto })
  @ApiCreatedResponse({ type: CreatedKeyDto, description: 'The key is shown only in this response' })
  @ApiErrorResponses({ 404: { description: 'No such account', messages: 'Account 7c9e6679-7425-40de-944b-e07fc1f90ae7 not found' } })
  async createKey(@Param('id', AccountIdPipe) id: string, @Body() body: CreateKeyDto): Promise<CreatedKeyDto> {
    return this.keys.create(id, body);
  }

  @Get(':id/keys')
  @ApiOperation({ summary: "The account's keys, newest first", description: 'Keys are stored hashed: the list shows each key\'s id, name and prefix, never the key.' })
  @ApiOkResponse({ type: KeyDto, isArray: true })
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  async listKeys(@Param('id', AccountIdPipe) id: string): Promise<{ object: 'list'; data: KeyDto[] }> {
    return { object: 'list', data: await this.keys.list(id) };
  }

  @Post(':id/credits')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: "Add credits to the account's balance (recorded in the ledger)" })
  @ApiOkResponse({ type: BalanceAfterCreditDto })
  @ApiErrorResponses({ 404: { description: 'No such account', messages: 'Account 7c9e6679-7425-40de-944b-e07fc1f90ae7 not found' } })
  async addCredits(@Param('id', AccountIdPipe) id: string, @Body() body: AddCreditsDto): Promise<BalanceAfterCreditDto> {
    const credits = creditsOf(body, this.settings.env.CREDITS_PER_USD, -MAX_ADMIN_CREDITS) ?? '0';
    const sent = body.usd === undefined || body.usd === null ? { field: 'credits' as const, value: credits } : { field: 'usd' as const, value: body.usd };
    const balanceMicro = await this.accounts.addCredits(id, credits, body.reason, sent);
    return { balance: microToCredits(balanceMicro) };
  }
}
