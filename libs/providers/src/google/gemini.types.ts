// The Gemini API (generativelanguage.googleapis.com, v1beta) wire format, as far as the
// gateway uses it. Field names are the REST JSON names (lowerCamelCase). Proto3 JSON omits
// default values, so numbers such as `index` or `startIndex` may be absent when they are 0.

export interface GeminiFunctionCall {
  name: string;
  args?: Record<string, unknown>;
  /** Set by some Gemini deployments (Vertex, Live API); unused by generateContent. */
  id?: string;
}

export interface GeminiFunctionResponse {
  name: string;
  response: Record<string, unknown>;
  id?: string;
}

export interface GeminiPart {
  text?: string;
  /** True on thought-summary parts of thinking models. */
  thought?: boolean;
  /** Opaque signature the model attaches (to function calls, Gemini 3) and expects back next turn. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
}

export type GeminiRole = 'user' | 'model';

export interface GeminiContent {
  role?: GeminiRole;
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface GeminiTool {
  functionDeclarations?: GeminiFunctionDeclaration[];
  googleSearch?: Record<string, never>;
}

export type GeminiFunctionCallingMode = 'AUTO' | 'ANY' | 'NONE';

export interface GeminiToolConfig {
  functionCallingConfig: { mode: GeminiFunctionCallingMode; allowedFunctionNames?: string[] };
}

export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseLogprobs?: boolean;
  /** Number of top candidates returned per position (with responseLogprobs). */
  logprobs?: number;
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: GeminiThinkingConfig;
}

export interface GeminiGenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
  tools?: GeminiTool[];
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
}

export interface GeminiGroundingChunk {
  web?: { uri?: string; title?: string };
}

export interface GeminiGroundingSupport {
  segment?: { partIndex?: number; startIndex?: number; endIndex?: number; text?: string };
  groundingChunkIndices?: number[];
  confidenceScores?: number[];
}

export interface GeminiGroundingMetadata {
  groundingChunks?: GeminiGroundingChunk[];
  groundingSupports?: GeminiGroundingSupport[];
  webSearchQueries?: string[];
}

export interface GeminiLogprobCandidate {
  token?: string;
  tokenId?: number;
  logProbability?: number;
}

export interface GeminiLogprobsResult {
  topCandidates?: Array<{ candidates?: GeminiLogprobCandidate[] }>;
  chosenCandidates?: GeminiLogprobCandidate[];
}

export interface GeminiCandidate {
  content?: GeminiContent;
  finishReason?: string;
  index?: number;
  groundingMetadata?: GeminiGroundingMetadata;
  logprobsResult?: GeminiLogprobsResult;
  avgLogprobs?: number;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiGenerateContentResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** Google's error body: `{error: {code, message, status}}` (status is the google.rpc code name). */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string; details?: unknown[] };
}
