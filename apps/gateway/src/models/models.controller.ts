import { Controller, Get, Headers, HttpStatus, Res } from '@nestjs/common';
import { ApiOkResponse, ApiResponse, ApiTags } from '@nestjs/swagger';
import { toIdentityProjection } from '@igw/domain';
import { GatewayException } from '@igw/platform';
import type { Response } from 'express';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';

/** The public model catalogue; no API key needed. */
@ApiTags('models')
@Controller()
export class ModelsController {
  constructor(private readonly catalogue: CatalogueSnapshotService) {}

  @Get(['v1/models', 'models'])
  @ApiOkResponse({ description: '{object: "list", data: [catalogue entries]}' })
  @ApiResponse({ status: 304, description: 'If-None-Match still matches the current ETag' })
  list(@Headers('if-none-match') ifNoneMatch: string | undefined, @Res({ passthrough: true }) response: Response): unknown {
    const index = this.catalogue.current;
    if (!index) throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: the model catalogue is not loaded yet. Retry shortly.');
    const etag = this.catalogue.etag;
    response.setHeader('etag', etag);
    if (ifNoneMatch && ifNoneMatch.split(',').some((candidate) => candidate.trim() === etag || candidate.trim() === '*')) {
      response.status(HttpStatus.NOT_MODIFIED);
      return undefined;
    }
    return { object: 'list', data: index.models.map(toIdentityProjection) };
  }
}
