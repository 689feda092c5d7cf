import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The environment of a pod whose only AWS credential is its EKS IRSA role: a web identity token
 * file, exchanged at the emulator's STS (`AWS_ENDPOINT_URL_STS`). Nothing else of the AWS SDK's
 * default chain may answer: no keys, no shared files, no instance metadata. The token file is
 * written in `folder`.
 */
export async function podRoleEnvironment(folder: string, emulatorUrl: string, webIdentityToken: string): Promise<NodeJS.ProcessEnv> {
  const tokenFile = path.join(folder, 'web-identity-token');
  await writeFile(tokenFile, webIdentityToken);
  return {
    AWS_REGION: 'us-east-1',
    AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/inference-gateway',
    AWS_ROLE_SESSION_NAME: 'gateway',
    AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
    AWS_ENDPOINT_URL_STS: `${emulatorUrl}/sts`,
    AWS_ACCESS_KEY_ID: undefined,
    AWS_SECRET_ACCESS_KEY: undefined,
    AWS_SESSION_TOKEN: undefined,
    AWS_PROFILE: undefined,
    AWS_BEARER_TOKEN_BEDROCK: undefined,
    AWS_CONFIG_FILE: path.join(folder, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(folder, 'no-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}
