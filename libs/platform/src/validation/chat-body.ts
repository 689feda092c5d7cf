import { createParamDecorator, type ExecutionContext, type PipeTransform } from '@nestjs/common';
import { acceptAzureChatCompletionRequest, acceptChatCompletionRequest, AzureChatCompletionRequestDto, ChatCompletionRequestDto } from '@igw/contracts';
import type { Request } from 'express';
import { appValidationPipe } from './validation.pipe';

export interface ChatBodyOptions {
  /** The Azure-style path (`AzureChatCompletionRequestDto`: `model` may be left out). */
  azure: boolean;
}

/**
 * A chat completion body, validated: the DTO the global validation pipe would return, or the
 * BadRequestException it throws. The fast acceptor (acceptChatCompletionRequest) answers the
 * bodies it is sure about; any other body goes through the app's own pipe, unchanged, which
 * alone words the errors. Usable from any request handler, not only from a Nest controller.
 */
export function validateChatBody(body: unknown, options: { azure: false }): Promise<ChatCompletionRequestDto>;
export function validateChatBody(body: unknown, options: { azure: true }): Promise<AzureChatCompletionRequestDto>;
export function validateChatBody(body: unknown, options: ChatBodyOptions): Promise<ChatCompletionRequestDto | AzureChatCompletionRequestDto>;
export async function validateChatBody(body: unknown, { azure }: ChatBodyOptions): Promise<ChatCompletionRequestDto | AzureChatCompletionRequestDto> {
  const accepted = azure ? acceptAzureChatCompletionRequest(body) : acceptChatCompletionRequest(body);
  if (accepted) return accepted;
  const metatype = azure ? AzureChatCompletionRequestDto : ChatCompletionRequestDto;
  return (await appValidationPipe().transform(body, { type: 'body', metatype })) as ChatCompletionRequestDto | AzureChatCompletionRequestDto;
}

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
const RequestBody = createParamDecorator((_data: unknown, context: ExecutionContext): unknown => context.switchToHttp().getRequest<Request>().body);

/**
 * `@Body()` for the chat routes, through validateChatBody. Swagger does not see a custom
 * parameter: the route declares its body with `@ApiBody({ type: ... })`.
 */
export function ChatBody(options: ChatBodyOptions = { azure: false }): ParameterDecorator {
  return RequestBody(undefined, new ChatBodyPipe(options));
}
