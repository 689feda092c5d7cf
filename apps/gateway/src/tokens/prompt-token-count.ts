import { HttpStatus } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { chatPromptTexts, countAllOffLoop, INLINE_COUNT_BYTES, tokenCountPool, utf8Bytes } from '@igw/tokenizer';

/** The text one free count may count (4 MiB, about a million tokens of prose): counting is free, so it is bounded apart from BODY_LIMIT. */
export const COUNT_TOKENS_MAX_TEXT_BYTES = 4 * 1024 * 1024;

/** Free counts (Messages' count_tokens, Gemini's countTokens) counting in the token counting workers now, in this process. */
let countsInPool = 0;

/**
 * The tokens of a chat-shaped prompt, as the gateway's tokenizer counts them for the routes that
 * count for free. `refusal` names the route and field a prompt over the limit is refused by. Counts that go to the
 * token counting workers take at most as many tasks as there are workers, so paid requests'
 * context checks never queue behind a flood of free counts (a 429 then).
 */
export async function countPromptTokens(prompt: Record<string, unknown>, refusal: { route: string; field: string }): Promise<number> {
  const { texts, fixedTokens } = chatPromptTexts(prompt as unknown as Parameters<typeof chatPromptTexts>[0]);
  const bytes = utf8Bytes(texts);
  if (bytes > COUNT_TOKENS_MAX_TEXT_BYTES) {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${refusal.field}: ${refusal.route} counts at most ${COUNT_TOKENS_MAX_TEXT_BYTES} bytes of text (more than any model's context holds). Received ${bytes}`);
  }
  if (bytes <= INLINE_COUNT_BYTES) return fixedTokens + (countAllOffLoop(texts) as number);
  if (countsInPool >= tokenCountPool.size) {
    throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS, 'Too Many Requests: token counting is busy on this replica; retry shortly.', { headers: { 'retry-after': '1' } });
  }
  countsInPool += 1;
  try {
    return fixedTokens + (await countAllOffLoop(texts));
  } finally {
    countsInPool -= 1;
  }
}
