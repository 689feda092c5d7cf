import { Controller, Delete, HttpCode, HttpStatus, Param, ParseUUIDPipe } from '@nestjs/common';
import { ApiNoContentResponse, ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import { GatewayException, RequireAdminToken } from '@igw/platform';
import { KeysService } from './keys.service';

const KeyIdPipe = new ParseUUIDPipe({ exceptionFactory: () => new GatewayException(HttpStatus.NOT_FOUND, 'API key not found') });

@ApiTags('admin')
@RequireAdminToken()
@Controller('admin/v1/keys')
export class AdminKeysController {
  constructor(private readonly keys: KeysService) {}

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
