import type { RequestAuthorizer } from '../transport/http-client';
import type { ProviderVariables } from '../connections/connections';
import type { CloudSettingsReader } from '../connections/cloud';

/** Fields a `kind: bedrock` entry of the providers file may carry beyond the common ones. */
export const BEDROCK_FIELDS: readonly string[] = ['region'];

/** How a Bedrock connection reaches its region and signs its calls. */
export interface BedrockSettings {
  kind: 'bedrock';
  region: string;
}

/** `https://bedrock-runtime.{region}.amazonaws.com`. */
export function bedrockBaseUrl(region: string): string {
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

/** Reads the Bedrock fields of a providers-file entry. */
export const readBedrockSettings: CloudSettingsReader<BedrockSettings> = (entry, context) => {
  const region = entry.region;
  if (typeof region !== 'string' || !/^[a-z]{2}(-[a-z]+)+-\d$/.test(region)) context.fail('region', 'expected an AWS region, e.g. us-east-1');
  return { kind: 'bedrock', region: region as string };
};

/** The built-in `bedrock` connection's settings, from the environment; undefined when it names no region. */
export function environmentBedrockSettings(variables: ProviderVariables): BedrockSettings | undefined {
  const region = variables.BEDROCK_REGION;
  return region ? { kind: 'bedrock', region } : undefined;
}

/** Signs each call (SigV4), or sends the Bedrock API key as a bearer token when the connection has one. */
export function bedrockAuthorizer(_settings: BedrockSettings, _apiKey: string | undefined): RequestAuthorizer {
  return async () => {
    throw new Error('Bedrock signing is not built yet');
  };
}
