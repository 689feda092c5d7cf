import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import type { ModelPricing, ModelResponseCache } from '@igw/contracts';

export class AmendCatalogueModelDto {
  @ApiPropertyOptional({ type: [String], description: 'Names to add as aliases of the model', example: ['my-mini'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(200, { each: true })
  aliases?: string[];

  @ApiPropertyOptional({
    description: 'New price list; applies to requests that start after the change',
    example: { kind: 'fixed', currency: 'USD', units: [{ unit: 'input_tokens', price: 0.2, per: 1000000 }] },
  })
  @IsOptional()
  @IsObject()
  pricing?: ModelPricing;

  @ApiPropertyOptional({
    description: "The response cache's rules for the model, replacing the entry's: allowed (false keeps its answers out of the cache) and hitPriceShare (0 to 1, at most 6 decimal places: the share of its prices a hit is charged)",
    example: { allowed: true, hitPriceShare: 0.1 },
  })
  @IsOptional()
  @IsObject()
  responseCache?: ModelResponseCache;
}

export class CatalogueRowDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ['active', 'retired'] }) status!: string;
  @ApiProperty({ enum: ['file', 'admin'], description: 'Where the current definition came from' }) source!: string;
  @ApiProperty({ description: 'The full entry, routing included' }) definition!: Record<string, unknown>;
  @ApiProperty() updatedAt!: string;
}

export class CatalogueChangeDto {
  @ApiProperty({ description: 'Catalogue revision after the change' }) revision!: number;
  @ApiPropertyOptional({ type: CatalogueRowDto }) model?: CatalogueRowDto;
}
