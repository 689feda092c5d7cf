// Amazon Bedrock runtime wire format, with the STS that issues its session credentials:
//   POST /model/{modelId}/invoke                        the Messages body of an Anthropic model → Anthropic's message
//   POST /model/{modelId}/invoke-with-response-stream   → event-stream `chunk` frames, each an Anthropic event as base64 `bytes`
//   POST /model/{modelId}/converse                      Converse → `{output: {message}, stopReason, usage, metrics}`
//   POST /model/{modelId}/converse-stream               → messageStart, contentBlockStart/Delta/Stop, messageStop, metadata frames
//   POST /sts                                           STS (form-encoded): AssumeRoleWithWebIdentity, AssumeRole (SigV4-signed, ExternalId checked)
// Answers are the emulator's Anthropic ones (../anthropic/messages.ts: its rules, counts and
// scripted turns), Converse requests being read as Messages requests and answered back in
// Converse's shape, so every family answers alike. Every model call must be signed (SigV4 with a
// key the emulator knows or session credentials its STS issued, see auth.ts) or carry a Bedrock
// API key. Errors are `{"message": "..."}` with the `x-amzn-ErrorType` header.
// Model-name controls are read from the path's model id (`%40` for `@`): those of controls.ts
// (`@status=429` answers ThrottlingException), and `@stream-exception=<type>` (e.g.
// `throttlingException`), which makes a stream's first frame that exception (a whole answer: its
// HTTP error, ThrottlingException's 429).
import type { IncomingMessage } from 'node:http';
import type { RequestContext } from '../context';
import { parseModelControls } from '../controls';
import type { ErrorResponse, RouterFailure, WireFormat } from '../format';
import type { BedrockAccounts } from './auth';
import { bedrockError, refuse } from './errors';
import { converse, invokeModel } from './models';
import { STREAM_EXCEPTION_MESSAGES } from './event-frames';
import { answerSts } from './sts';

/** The HTTP status of a stream exception answered whole (`throttlingException` → 429). */
function awsExceptionStatus(type: string): number {
  const statuses: Record<string, number> = { throttlingException: 429, validationException: 400, modelNotReadyException: 503, serviceUnavailableException: 503, internalServerException: 500, modelStreamErrorException: 424 };
  return statuses[type] ?? 500;
}

export type { BedrockEmulatorOptions } from './auth';
export { BedrockAccounts } from './auth';
export { bedrockError } from './errors';

const STREAM_EXCEPTION = /@stream-exception=([A-Za-z]+)$/;

export type BedrockAction = 'invoke' | 'invoke-with-response-stream' | 'converse' | 'converse-stream';

/** The Bedrock format of one emulator: its accounts (keys, STS sessions) are its own. */
export function bedrockFormat(accounts: BedrockAccounts): WireFormat {
  const modelRoute = (action: BedrockAction) => ({
    method: 'POST' as const,
    path: new RegExp(`^/model/([^/]+)/${action}$`),
    // Bedrock authorizes its own way (SigV4), not with the emulator's API key.
    public: true,
    handle: async (ctx: RequestContext): Promise<void> => {
      const refusal = await accounts.refusal(ctx.req, ctx.rawBody, 'bedrock');
      if (refusal !== undefined) return refuse(ctx, refusal);
      let id = decodeURIComponent(ctx.params[0]);
      const exception = STREAM_EXCEPTION.exec(id);
      if (exception !== null) id = id.slice(0, exception.index);
      const { model, ...controls } = parseModelControls(id);
      ctx.controls = { ...ctx.controls, ...controls };
      if (controls.delayMs !== undefined && !(await ctx.sleep(controls.delayMs))) return;
      if (controls.status !== undefined) return refuse(ctx, { status: controls.status, ...bedrockError(controls.status) });
      const streamException = exception?.[1];
      // A whole answer gets the exception as Bedrock answers it outside a stream: its HTTP error.
      if (streamException !== undefined && !action.endsWith('stream')) {
        const status = awsExceptionStatus(streamException);
        return refuse(ctx, { status, type: streamException.charAt(0).toUpperCase() + streamException.slice(1), message: STREAM_EXCEPTION_MESSAGES[streamException] ?? bedrockError(status).message });
      }
      if (action === 'invoke' || action === 'invoke-with-response-stream') return invokeModel(ctx, model, action === 'invoke-with-response-stream', streamException);
      return converse(ctx, model, action === 'converse-stream', streamException);
    },
  });
  return {
    name: 'bedrock',
    routes: [
      modelRoute('invoke'),
      modelRoute('invoke-with-response-stream'),
      modelRoute('converse'),
      modelRoute('converse-stream'),
      { method: 'POST', path: /^\/sts\/?$/, public: true, handle: (ctx) => answerSts(ctx, accounts) },
    ],
    ownsPath: (path: string) => path.startsWith('/model/') || path === '/sts' || path === '/sts/',
    apiKeyOf(req: IncomingMessage): string | undefined {
      const header = req.headers.authorization;
      return header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
    },
    errorBody: (_status: number, message: string) => ({ message }),
    describeFailure(failure: RouterFailure): ErrorResponse {
      switch (failure.kind) {
        case 'not_found':
          return { status: 404, message: `Unknown operation: ${failure.method} ${failure.path}` };
        case 'invalid_json':
          return { status: 400, message: 'The request body is not valid JSON.' };
        case 'body_too_large':
          return { status: 413, message: `Request exceeds the maximum allowed number of bytes (${failure.limitBytes}).` };
        case 'missing_api_key':
        case 'invalid_api_key':
          return { status: 403, message: 'The security token included in the request is invalid.' };
        case 'emulated':
          return { status: failure.status, message: bedrockError(failure.status).message };
        case 'internal':
          return { status: 500, message: 'The server encountered an error processing your request.' };
      }
    },
  };
}
