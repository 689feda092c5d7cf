// Type imports only: the adapters the registry loads read this module.
import type { ProviderKind } from './registry';

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

export function wireApiOf(kind: ProviderKind, model: string): WireApi {
  switch (kind) {
    case 'anthropic':
      return 'anthropic-messages';
    case 'google':
      return 'gemini';
    case 'bedrock':
      return BEDROCK_ANTHROPIC.test(model) ? 'anthropic-messages' : 'bedrock-converse';
    case 'vertex':
      if (VERTEX_CLAUDE.test(model)) return 'anthropic-messages';
      return VERTEX_GEMINI.test(model) ? 'gemini' : 'openai';
    default:
      return 'openai';
  }
}

/** Whether the target takes Anthropic's Messages body (natively: `/v1/messages` as it came). */
export function speaksMessages(target: { definition: { kind: ProviderKind }; model: string }): boolean {
  return wireApiOf(target.definition.kind, target.model) === 'anthropic-messages';
}

/** Whether the target takes Google's GenerateContentRequest (natively: the Gemini API as it came). */
export function speaksGemini(target: { definition: { kind: ProviderKind }; model: string }): boolean {
  return wireApiOf(target.definition.kind, target.model) === 'gemini';
}

