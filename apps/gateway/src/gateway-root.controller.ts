import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';

/**
 * The gateway's root: clients that check a base address before their first call (a `HEAD /` or
 * `GET /`) get a 200 as liveness answers it, with no key, no body and no I/O. Express serves HEAD
 * through the GET route (status and headers, no body).
 */
@ApiTags('health')
@Controller()
export class GatewayRootController {
  @Get()
  @ApiOperation({ summary: 'The gateway answers (HEAD / too): what clients that check a base address before their first call see; no key' })
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  root(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
