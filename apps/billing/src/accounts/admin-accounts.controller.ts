import { Body, Controller, Get, HttpCode, HttpStatus, Param, ParseUUIDPipe, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import { microToCredits } from '@igw/domain';
import { GatewayException, RequireAdminToken } from '@igw/platform';
import { CreatedKeyDto, CreateKeyDto } from '../keys/dto/create-key.dto';
import { KeysService } from '../keys/keys.service';
import { AccountsService } from './accounts.service';
import { AccountDto } from './dto/account.dto';
import { AddCreditsDto, BalanceAfterCreditDto } from './dto/add-credits.dto';
import { CreateAccountDto } from './dto/create-account.dto';

/** Account ids are UUIDs; anything else cannot name an account, so it is a 404, not a 500. */
const AccountIdPipe = new ParseUUIDPipe({ exceptionFactory: () => new GatewayException(HttpStatus.NOT_FOUND, 'Account not found') });

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
