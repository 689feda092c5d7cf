import { createParamDecorator, type ExecutionContext, type PipeTransform } from '@nestjs/common';
import { validateChatBody, type AzureChatCompletionRequestDto, type ChatBodyOptions, type ChatCompletionRequestDto } from '@igw/contracts';
import type { ServedRequest } from '@igw/http';

class ChatBodyPipe implements PipeTransform<unknown, Promise<ChatCompletionRequestDto | AzureChatCompletionRequestDto>> {
  constructor(private readonly options: ChatBodyOptions) {}

  transform(body: unknown): Promise<ChatCompletionRequestDto | AzureChatCompletionRequestDto> {
    return validateChatBody(body, this.options);
  }
}

/**
 * The request body, as a custom parameter: the global ValidationPipe leaves custom parameters
 * alone (no `validateCustomDecorators`), so the body is validated once, by ChatBodyPipe.
 */
const RequestBody = createParamDecorator((_data: unknown, context: ExecutionContext): unknown => context.switchToHttp().getRequest<ServedRequest & { body?: unknown }>().body);

/**
 * `@Body()` for the chat routes, through validateChatBody. Swagger does not see a custom
 * parameter: the route declares its body with `@ApiBody({ type: ... })`.
 */
export function ChatBody(options: ChatBodyOptions = { azure: false }): ParameterDecorator {
  return RequestBody(undefined, new ChatBodyPipe(options));
}
