import { Controller, Get, HttpStatus } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses, GatewayException, RequireAdminToken } from '@igw/http';
import { ConnectionsReportDto } from './dto/connections-report.dto';
import { GATEWAY_ASK_TIMEOUT_MS, GatewayUpstreamsAsk } from './gateway-upstreams';

export const NO_GATEWAY_ANSWERED = `Service Unavailable: no gateway answered within ${GATEWAY_ASK_TIMEOUT_MS / 1000} s, so the connections are unknown. Check that a gateway is running on billing's queue backend (the same REDIS_URL, or DATABASE_URL without it, and QUEUE_PREFIX), then retry.`;
export const GATEWAY_WITHOUT_CONNECTIONS =
  'Service Unavailable: the gateway that answered does not report its connections (it runs an older version). Retry once the gateways are upgraded.';

@ApiTags('admin')
@RequireAdminToken()
@Controller('admin/v1/connections')
export class AdminConnectionsController {
  constructor(private readonly gateways: GatewayUpstreamsAsk) {}

  @Get()
  @ApiOperation({
    summary: "The upstream estate: every connection and its deployments' shared state",
    description:
      'Only a gateway holds the connections, so billing asks the gateways (a relay broadcast) and answers with the first one to reply, ' +
      `within ${GATEWAY_ASK_TIMEOUT_MS / 1000} s. Deployments' counters are shared by every replica. No secret is in it: no key, and only the names of extra headers.`,
  })
  @ApiOkResponse({ type: ConnectionsReportDto })
  @ApiErrorResponses({
    503: {
      description: `No gateway answered within ${GATEWAY_ASK_TIMEOUT_MS / 1000} s, or the one that did is too old to report its connections`,
      messages: { noGateway: NO_GATEWAY_ANSWERED, olderGateway: GATEWAY_WITHOUT_CONNECTIONS },
    },
  })
  async list(): Promise<ConnectionsReportDto> {
    const answer = await this.gateways.ask();
    if (!answer) throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, NO_GATEWAY_ANSWERED);
    // A gateway from before the report answers the catalogue page's question without it.
    if (!answer.connections) throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, GATEWAY_WITHOUT_CONNECTIONS);
    return ConnectionsReportDto.from(answer.connections);
  }
}
