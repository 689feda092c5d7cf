import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

export class CreateKeyDto {
  @ApiPropertyOptional({ example: 'ci pipeline' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;
}

export class CreatedKeyDto {
  @ApiProperty() id!: string;
  @ApiProperty({ description: 'The API key. Shown only here; store it now.' }) key!: string;
  @ApiProperty({ description: 'First characters of the key, to recognise it later' }) prefix!: string;
  @ApiProperty({ nullable: true }) name!: string | null;
  @ApiProperty() accountId!: string;
  @ApiProperty() createdAt!: string;
}
