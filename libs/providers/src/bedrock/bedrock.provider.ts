import { builtInProvider, type ProviderKindDefinition } from '../provider-definition';
import { bedrockWireApi } from '../wire-api';
import { BedrockChatAdapter } from './bedrock.chat';

/**
 * Amazon Bedrock, configured by a region (BEDROCK_REGION): its credentials come from AWS's own
 * chain (a pod's role), or an API key.
 */
export const BEDROCK_KIND: ProviderKindDefinition = {
  kind: 'bedrock',
  wireApi: bedrockWireApi,
  providers: [builtInProvider('bedrock', 'bedrock', { variables: { apiKey: 'AWS_BEARER_TOKEN_BEDROCK', baseUrl: 'BEDROCK_BASE_URL' }, keyless: true, emulatorPath: '' })],
  chat: new BedrockChatAdapter(),
};
