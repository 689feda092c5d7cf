import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, ParseUUIDPipe, Patch } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNoContentResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import { GatewayException, RequireAdminToken } from '@igw/http';
import { KeyDto } from './dto/key.dto';
import { KeyRulesDto } from './dto/key-rules.dto';
import { KeysService } from './keys.service';

const KeyIdPipe = new ParseUUIDPipe({ exceptionFactory: () => new GatewayException(HttpStatus.NOT_FOUND, 'API key not found') });

@ApiTags('admin')
@RequireAdminToken()
@Controller('admin/v1/keys')
export class AdminKeysController {
  constructor(private readonly keys: KeysService) {}

  @Get(':id')
  @ApiOperation({ summary: 'One API key: its rules and its spend in the current budget period' })
  @ApiOkResponse({ type: KeyDto })
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  async get(@Param('id', KeyIdPipe) id: string): Promise<KeyDto> {
    return this.keys.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: "Change a key's rules",
    description:
      'Only the fields sent change; null removes a rule. Every gateway applies the change within moments (broadcast). ' +
      "A changed budget's spend is summed again from the ledger for the current period.",
  })
  @ApiOkResponse({ type: KeyDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto })
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  async update(@Param('id', KeyIdPipe) id: string, @Body() body: KeyRulesDto): Promise<KeyDto> {
    return this.keys.update(id, body);
  }

  /** Revokes a key: every service refuses it within two seconds. */
  @Delete(':id')
  @ApiOperation({ summary: 'Revoke an API key (every service refuses it within two seconds)' })
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  async revoke(@Param('id', KeyIdPipe) id: string): Promise<void> {
    await this.keys.revoke(id);
  }
}
