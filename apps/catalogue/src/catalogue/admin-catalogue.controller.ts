import { Body, Controller, Delete, Get, HttpStatus, Patch, Put } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { catalogueEntryErrors, ErrorMessages, type CatalogueModel } from '@igw/contracts';
import { formatValidationErrors } from '@igw/validation';
import { GatewayException, PathId, RequireAdminToken } from '@igw/http';
import type { CatalogueModelEntity } from './catalogue-model.entity';
import { CatalogueService, type CatalogueChange } from './catalogue.service';
import { AmendCatalogueModelDto, CatalogueChangeDto, CatalogueRowDto } from './dto/catalogue-admin.dto';

/**
 * Changing the catalogue at run time. Every change is a new revision, announced to every
 * gateway, which serves it within two seconds; prices apply to requests that start after.
 */
@ApiTags('catalogue admin')
@RequireAdminToken()
@Controller('admin/v1/catalogue')
export class AdminCatalogueController {
  constructor(private readonly catalogue: CatalogueService) {}

  @Get('models')
  @ApiOperation({ summary: 'Every entry, active and retired, with routing' })
  @ApiOkResponse({ type: [CatalogueRowDto] })
  async list(): Promise<{ object: 'list'; data: CatalogueRowDto[] }> {
    return { object: 'list', data: (await this.catalogue.list()).map(toRow) };
  }

  @Get('models/*id')
  @ApiOperation({ summary: 'One entry by id, active or retired, with routing' })
  @ApiOkResponse({ type: CatalogueRowDto })
  async get(@PathId('id') id: string): Promise<CatalogueRowDto> {
    return toRow(await this.catalogue.get(id));
  }

  @Put('models/*id')
  @ApiOperation({ summary: 'Create or replace an entry (the body is a whole catalogue entry; its id may be left out)' })
  @ApiBody({ schema: { type: 'object', example: { id: 'acme/model', aliases: [], type: 'openai/chat-completions', info: { name: 'Model', developer: 'Acme' }, tags: [], routing: { sources: [{ provider: 'openai', model: 'gpt-4o-mini' }] } } } })
  @ApiOkResponse({ type: CatalogueChangeDto })
  async upsert(@PathId('id') id: string, @Body() body: unknown): Promise<CatalogueChangeDto> {
    const entry = { ...(isObject(body) ? body : {}), id: isObject(body) && body.id !== undefined ? body.id : id };
    if (entry.id !== id) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} id: the body names '${String(entry.id)}' but the path names '${id}'.`);
    }
    return toChange(await this.catalogue.upsert(validated(entry)));
  }

  @Patch('models/*id')
  @ApiOperation({ summary: 'Add aliases and/or change the price list or the response cache rules' })
  @ApiOkResponse({ type: CatalogueChangeDto })
  async amend(@PathId('id') id: string, @Body() body: AmendCatalogueModelDto): Promise<CatalogueChangeDto> {
    return toChange(await this.catalogue.amend(id, body, validated));
  }

  @Delete('models/*id')
  @ApiOperation({ summary: 'Retire an entry (kept as history; gateways stop serving it)' })
  @ApiOkResponse({ type: CatalogueChangeDto })
  async retire(@PathId('id') id: string): Promise<CatalogueChangeDto> {
    return toChange(await this.catalogue.retire(id));
  }
}

/** The entry as given, once it passes the catalogue file's DTOs (unknown fields are refused, not dropped). */
function validated(entry: unknown): CatalogueModel {
  const errors = catalogueEntryErrors(entry);
  if (errors.length > 0) throw new GatewayException(HttpStatus.BAD_REQUEST, formatValidationErrors(errors));
  return entry as CatalogueModel;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toRow(row: CatalogueModelEntity): CatalogueRowDto {
  return { id: row.id, status: row.status, source: row.source, definition: row.definition as unknown as Record<string, unknown>, updatedAt: new Date(row.updatedAt).toISOString() };
}

function toChange(change: CatalogueChange): CatalogueChangeDto {
  return { revision: change.revision, model: change.model ? toRow(change.model) : undefined };
}
