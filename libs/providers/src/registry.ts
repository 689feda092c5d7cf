import type { ProviderDefinition, ProviderKind, ProviderKindDefinition } from './provider-definition';
import type { WireApi } from './wire-api';
import { ANTHROPIC_KIND } from './anthropic/anthropic.provider';
import { AZURE_OPENAI_KIND } from './azure/azure-openai.provider';
import { BEDROCK_KIND } from './bedrock/bedrock.provider';
import { DEEPGRAM_KIND } from './deepgram/deepgram.provider';
import { GOOGLE_KIND } from './google/google.provider';
import { OPENAI_KIND } from './openai/openai.provider';
import { STABILITY_KIND } from './stability/stability.provider';
import { VERTEX_KIND } from './vertex/vertex.provider';

/** Every provider folder's definition; a new wire format is one more entry here. */
const KINDS = [OPENAI_KIND, AZURE_OPENAI_KIND, ANTHROPIC_KIND, GOOGLE_KIND, DEEPGRAM_KIND, STABILITY_KIND, BEDROCK_KIND, VERTEX_KIND] as const;

const BY_KIND = new Map<ProviderKind, ProviderKindDefinition>(KINDS.map((definition) => [definition.kind, definition]));

/** Known upstream providers: the built-in ones of every kind. */
export const PROVIDERS: readonly ProviderDefinition[] = KINDS.flatMap((definition) => definition.providers);

/** The definition of a provider kind: its wire format and its adapter per capability (undefined where its API has none). */
export function providerKind(kind: ProviderKind): ProviderKindDefinition {
  return BY_KIND.get(kind)!;
}

export function findProvider(name: string): ProviderDefinition | undefined {
  const key = name.toLowerCase();
  return PROVIDERS.find((definition) => definition.name === key);
}

export function wireApiOf(kind: ProviderKind, model: string): WireApi {
  return providerKind(kind).wireApi(model);
}

/** Whether the target takes Anthropic's Messages body (natively: `/v1/messages` as it came). */
export function speaksMessages(target: { definition: { kind: ProviderKind }; model: string }): boolean {
  return wireApiOf(target.definition.kind, target.model) === 'anthropic-messages';
}

/** Whether the target takes Google's GenerateContentRequest (natively: the Gemini API as it came). */
export function speaksGemini(target: { definition: { kind: ProviderKind }; model: string }): boolean {
  return wireApiOf(target.definition.kind, target.model) === 'gemini';
}
