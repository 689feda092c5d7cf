// The Azure-style request contract lives in @igw/contracts, next to the fast acceptor that
// mirrors it (chat-request-acceptor.ts); re-exported here for the gateway's own imports.
export { AzureChatCompletionRequestDto } from '@igw/contracts';
