import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { collectProcessMetrics, renderMetrics } from './metrics';

/** Prometheus' scrape endpoint, beside the health checks and as open as they are. */
@ApiTags('health')
@Controller()
export class MetricsController {
  constructor() {
    collectProcessMetrics();
  }

  @Get('metrics')
  @ApiOperation({ summary: "Metrics in Prometheus' text format (requests, upstream calls, tokens, credits, queues, ledger lag)" })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Every metric of this process' })
  async metrics(@Res() response: Response): Promise<void> {
    const { contentType, body } = await renderMetrics();
    response.status(200).setHeader('content-type', contentType);
    response.setHeader('cache-control', 'no-store');
    response.end(body);
  }
}
