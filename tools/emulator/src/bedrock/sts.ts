// The emulator's STS (what `AWS_ENDPOINT_URL_STS` points an SDK at): AssumeRoleWithWebIdentity
// (IRSA: a role and the pod's projected token, unsigned) and AssumeRole (signed with credentials
// the emulator knows; the role's ExternalId checked), answered in STS's XML with credentials that
// last `sessionSeconds`, which the Bedrock routes then take.
import type { RequestContext } from '../context';
import { isRecord, randomId } from '../util';
import type { BedrockAccounts } from './auth';

const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/;

export async function answerSts(ctx: RequestContext, accounts: BedrockAccounts): Promise<void> {
  const form = isRecord(ctx.body) ? (ctx.body as Record<string, unknown>) : {};
  const field = (name: string): string => (typeof form[name] === 'string' ? (form[name] as string) : '');
  const action = field('Action');
  const roleArn = field('RoleArn');
  const sessionName = field('RoleSessionName') || 'session';
  if (action !== 'AssumeRoleWithWebIdentity' && action !== 'AssumeRole') return stsError(ctx, 400, 'InvalidAction', `Could not find operation ${action || '(none)'} for version 2011-06-15`);
  if (!ROLE_ARN.test(roleArn)) return stsError(ctx, 400, 'ValidationError', `1 validation error detected: Value '${roleArn}' at 'roleArn' failed to satisfy constraint`);
  if (action === 'AssumeRoleWithWebIdentity') {
    const token = field('WebIdentityToken');
    const expected = accounts.options.webIdentityToken;
    if (token === '' || (expected !== undefined && token !== expected)) return stsError(ctx, 400, 'InvalidIdentityToken', 'Couldn\'t retrieve verification key from your identity provider');
  } else {
    const refusal = await accounts.refusal(ctx.req, ctx.rawBody, 'sts');
    if (refusal !== undefined) return stsError(ctx, refusal.status, refusal.type, refusal.message);
    const role = accounts.options.roles?.[roleArn];
    if (role === undefined) return stsError(ctx, 403, 'AccessDenied', `User is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`);
    if (role.externalId !== undefined && field('ExternalId') !== role.externalId) return stsError(ctx, 403, 'AccessDenied', `User is not authorized to perform: sts:AssumeRole on resource: ${roleArn} (ExternalId)`);
  }
  accounts.issued[action]++;
  const credentials = accounts.issue(roleArn);
  const roleName = roleArn.slice(roleArn.lastIndexOf('/') + 1);
  const account = roleArn.split(':')[4];
  const extra = action === 'AssumeRoleWithWebIdentity' ? '<SubjectFromWebIdentityToken>system:serviceaccount:default:gateway</SubjectFromWebIdentityToken><Audience>sts.amazonaws.com</Audience>' : '';
  const xml =
    `<${action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><${action}Result>` +
    `<Credentials><AccessKeyId>${credentials.accessKeyId}</AccessKeyId><SecretAccessKey>${escapeXml(credentials.secretAccessKey)}</SecretAccessKey>` +
    `<SessionToken>${escapeXml(credentials.sessionToken)}</SessionToken><Expiration>${credentials.expiration.toISOString()}</Expiration></Credentials>` +
    `<AssumedRoleUser><AssumedRoleId>AROA${randomId(16).toUpperCase()}:${escapeXml(sessionName)}</AssumedRoleId><Arn>arn:aws:sts::${account}:assumed-role/${escapeXml(roleName)}/${escapeXml(sessionName)}</Arn></AssumedRoleUser>` +
    `${extra}</${action}Result><ResponseMetadata><RequestId>${ctx.requestId}</RequestId></ResponseMetadata></${action}Response>`;
  ctx.send(200, xml, 'text/xml');
}

function stsError(ctx: RequestContext, status: number, code: string, message: string): void {
  const xml = `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error><RequestId>${ctx.requestId}</RequestId></ErrorResponse>`;
  ctx.send(status, xml, 'text/xml');
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
