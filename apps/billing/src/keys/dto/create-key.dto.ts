import { ApiProperty } from '@nestjs/swagger';
import { KeyDto } from './key.dto';
import { KeyRulesDto } from './key-rules.dto';

/** A new key's name and rules, all optional (see KeyRulesDto). */
export class CreateKeyDto extends KeyRulesDto {}

export class CreatedKeyDto extends KeyDto {
  @ApiProperty({ description: 'The API key. Shown only here; store it now.' }) key!: string;
}
