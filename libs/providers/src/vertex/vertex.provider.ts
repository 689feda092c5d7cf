import { builtInProvider, type ProviderKindDefinition } from '../provider-definition';
import { vertexWireApi } from '../wire-api';
import { VertexChatAdapter } from './vertex.chat';
import { VertexEmbeddingsAdapter } from './vertex.embeddings';

/**
 * Google Cloud's Vertex AI, configured by a location (VERTEX_LOCATION). Its credential is
 * Application Default Credentials' file (GOOGLE_APPLICATION_CREDENTIALS, read by
 * google-auth-library itself) or the metadata server, never a key.
 */
export const VERTEX_KIND: ProviderKindDefinition = {
  kind: 'vertex',
  wireApi: vertexWireApi,
  providers: [builtInProvider('vertex', 'vertex', { variables: { apiKey: 'GOOGLE_APPLICATION_CREDENTIALS', baseUrl: 'VERTEX_BASE_URL' }, keyless: true, emulatorPath: '' })],
  chat: new VertexChatAdapter(),
  embeddings: new VertexEmbeddingsAdapter(),
};
