import { ApiProperty } from '@nestjs/swagger';
import type { ApiKeyEntity } from '../api-key.entity';

/** A key as listed: never the key itself (only its hash is stored). */
export class KeyDto {
  @ApiProperty() id!: string;
  @ApiProperty({ nullable: true }) name!: string | null;
  @ApiProperty({ description: 'First characters of the key, to recognise it' }) prefix!: string;
  @ApiProperty() accountId!: string;
  @ApiProperty() createdAt!: string;
  @ApiProperty({ nullable: true, description: 'When the key was revoked; null while it works' }) revokedAt!: string | null;

  static from(key: ApiKeyEntity): KeyDto {
    return {
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      accountId: key.accountId,
      createdAt: key.createdAt.toISOString(),
      revokedAt: key.revokedAt?.toISOString() ?? null,
    };
  }
}
