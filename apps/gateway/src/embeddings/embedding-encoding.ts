import type { EmbeddingEncodingFormat } from '@igw/contracts';

/**
 * A vector as OpenAI answers `encoding_format: base64`: its values as little-endian float32,
 * base64-encoded. The official SDKs ask for this by default and decode it themselves.
 */
export function toBase64Float32(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i], i * 4);
  return bytes.toString('base64');
}

/** The `embedding` field of one result item in the format the client asked for (float by default). */
export function encodeEmbedding(vector: number[], format: EmbeddingEncodingFormat | undefined): number[] | string {
  return format === 'base64' ? toBase64Float32(vector) : vector;
}
