import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';

/**
 * The gateway's root: Claude Code sends `HEAD /` before its first call and gives up on an error,
 * so `/` answers as liveness does, with no key, no body and no I/O. Express serves HEAD through
 * the GET route (status and headers, no body).
 */
@ApiTags('health')
@Controller()
export class GatewayRootController {
  @Get()
  @ApiOperation({ summary: 'The gateway answers (HEAD / too): what clients such as Claude Code check before their first call; no key' })
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  root(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
