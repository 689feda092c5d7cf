import { appValidationPipe } from '../validation/validation.pipe';
import { AzureChatCompletionRequestDto } from './azure-chat-completion-request.dto';
import { ChatCompletionRequestDto } from './chat-completion-request.dto';
import { acceptAzureChatCompletionRequest, acceptChatCompletionRequest } from './chat-request-acceptor';

export interface ChatBodyOptions {
  /** The Azure-style path (`AzureChatCompletionRequestDto`: `model` may be left out). */
  azure: boolean;
}

/**
 * A chat completion body, validated: the DTO the global validation pipe would return, or the
 * BadRequestException it throws. The fast acceptor answers the bodies it is sure about; any
 * other body goes through the app's own pipe, which alone words the errors.
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
