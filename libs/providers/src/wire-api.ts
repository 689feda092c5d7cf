/**
 * The API a source's requests are written in. Most kinds speak one; a cloud platform serves
 * several families under one kind, told apart by the model id: Bedrock serves Anthropic's models
 * through InvokeModel with the Messages body and every other family through Converse; Vertex AI
 * serves Gemini through generateContent, Claude through rawPredict with the Messages body, and
 * partner models through its OpenAI-compatible endpoint.
 */
export type WireApi = 'openai' | 'anthropic-messages' | 'gemini' | 'bedrock-converse';

/** Bedrock's Anthropic model ids, with or without a cross-region inference profile prefix (`us.`, `eu.`, `apac.`, `global.`). */
const BEDROCK_ANTHROPIC = /^(?:[a-z]{2,6}\.)?anthropic\./;
/** Vertex AI's Claude ids (`claude-sonnet-4@20250514`), optionally under their publisher path. */
const VERTEX_CLAUDE = /^(?:publishers\/anthropic\/models\/)?claude-/;
const VERTEX_GEMINI = /^(?:publishers\/google\/models\/)?gemini-/;

export function bedrockWireApi(model: string): WireApi {
  return BEDROCK_ANTHROPIC.test(model) ? 'anthropic-messages' : 'bedrock-converse';
}

export function vertexWireApi(model: string): WireApi {
  if (VERTEX_CLAUDE.test(model)) return 'anthropic-messages';
  return VERTEX_GEMINI.test(model) ? 'gemini' : 'openai';
}
