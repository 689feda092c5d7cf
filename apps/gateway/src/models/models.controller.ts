import { Controller, Get, Headers, HttpStatus, Inject, Query, Res } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ErrorBodyDto, ModelEntryDto, ModelListDto, WrappedModelDto, type CatalogueModel } from '@igw/contracts';
import { lookupCatalogueModel, queryCatalogue } from '@igw/domain';
import { GatewayException, PathId } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { planRoute } from '@igw/providers';
import { gatewayConnections } from '../paid-requests/upstream-estate';
import type { Response } from 'express';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';

const FILTER_DOCS: Array<[string, string]> = [
  ['include', 'Sections to attach: pricing, modalities, capabilities or all (comma-separated or repeated; unknown values ignored)'],
  ['details', '`true` is shorthand for include=all'],
  ['id', 'Keep models whose id or alias matches'],
  ['tags', 'Keep models carrying one of these tags'],
  ['capabilities', 'Keep models declaring one of these capabilities'],
  ['output_modalities', 'Keep models producing one of these modalities'],
  ['input_modalities', 'Keep models reading one of these modalities'],
  ['modalities', 'Keep models reading or producing one of these modalities'],
  ['type', 'Keep models of this endpoint type (e.g. openai/chat-completions, or just chat-completions)'],
  ['available', '`true` keeps only models that can answer here (a source whose provider has its key and address configured); by default every model is listed'],
];

/**
 * The public model catalogue, served from the in-memory snapshot: no key, no I/O. The ETag
 * is the catalogue revision, so it changes whenever any entry changes.
 */
@ApiTags('models')
@Controller()
export class ModelsController {
  /** Per catalogue entry (entries are replaced, never changed): whether a source of it is configured. */
  private readonly answerable = new WeakMap<CatalogueModel, boolean>();

  constructor(
    private readonly catalogue: CatalogueSnapshotService,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  @Get(['v1/models', 'models'])
  @ApiOperation({ summary: 'List the model catalogue (values case-insensitive; OR within a parameter, AND across parameters)' })
  @FilterQueries()
  @ApiOkResponse({ type: ModelListDto, description: '{object: "list", data: [catalogue entries, each with OpenAI\'s object: "model", created and owned_by, and the APIs it can be called through]}' })
  @ApiResponse({ status: 304, description: 'If-None-Match still matches the current ETag' })
  list(
    @Query() query: Record<string, unknown>,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): unknown {
    const index = this.snapshot();
    if (this.notModified(ifNoneMatch, response)) return undefined;
    return { object: 'list', data: queryCatalogue(index.models, query, this.canAnswer) };
  }

  /** OpenAI's `models.retrieve(id)`: the entry itself, unwrapped, so every OpenAI client reads it. */
  @Get(['v1/models/*id', 'models/*id'])
  @ApiOperation({
    summary: "One model in OpenAI's retrieve shape: the entry itself (id, object, created, owned_by and the catalogue fields); id or alias, case-insensitive, slashes unescaped",
  })
  @OneModelQueries()
  @ApiOkResponse({ type: ModelEntryDto, description: 'The catalogue entry, with `object: "model"`, `created`, `owned_by` and `apis`' })
  @ApiNotFoundResponse({ type: ErrorBodyDto, description: "Not Found: no model named '<id>' in the catalogue. (error.code model_not_found)" })
  retrieve(
    @PathId('id') id: string,
    @Query() query: Record<string, unknown>,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): unknown {
    const model = this.lookUp(id, query);
    if (this.notModified(ifNoneMatch, response)) return undefined;
    return model;
  }

  @Get('model/*id')
  @ApiOperation({ summary: 'One model by id or alias (case-insensitive; slashes go unescaped in the path)' })
  @OneModelQueries()
  @ApiOkResponse({ type: WrappedModelDto, description: '{object: "model", data: entry}' })
  @ApiNotFoundResponse({ type: ErrorBodyDto })
  one(
    @PathId('id') id: string,
    @Query() query: Record<string, unknown>,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): unknown {
    const model = this.lookUp(id, query);
    if (this.notModified(ifNoneMatch, response)) return undefined;
    return { object: 'model', data: model };
  }

  private lookUp(id: string, query: Record<string, unknown>) {
    const model = lookupCatalogueModel(this.snapshot(), id, query);
    if (!model) throw new GatewayException(HttpStatus.NOT_FOUND, `Not Found: no model named '${id}' in the catalogue.`);
    return model;
  }

  private readonly canAnswer = (model: CatalogueModel): boolean => {
    let answerable = this.answerable.get(model);
    if (answerable === undefined) {
      answerable = planRoute(model.routing.sources, gatewayConnections(this.settings).current).targets.length > 0;
      this.answerable.set(model, answerable);
    }
    return answerable;
  };

  private snapshot() {
    const index = this.catalogue.current;
    if (!index) throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: the model catalogue is not loaded yet. Retry shortly.');
    return index;
  }

  /** Sets the ETag; answers 304 (empty body) when the client already has this revision. */
  private notModified(ifNoneMatch: string | undefined, response: Response): boolean {
    const etag = this.catalogue.etag;
    response.setHeader('etag', etag);
    if (!ifNoneMatch) return false;
    const matches = ifNoneMatch.split(',').some((candidate) => {
      const tag = candidate.trim();
      return tag === '*' || tag === etag || `W/${tag}` === etag;
    });
    if (matches) response.status(HttpStatus.NOT_MODIFIED);
    return matches;
  }
}

function OneModelQueries(): MethodDecorator {
  return (target, key, descriptor) => {
    for (const [name, description] of FILTER_DOCS.slice(0, 2)) ApiQuery({ name, required: false, description })(target, key, descriptor);
  };
}

function FilterQueries(): MethodDecorator {
  return (target, key, descriptor) => {
    for (const [name, description] of FILTER_DOCS) ApiQuery({ name, required: false, description })(target, key, descriptor);
  };
}
