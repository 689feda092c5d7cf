// The Azure-style request contract lives in @igw/contracts, beside the chat body it extends;
// re-exported here for the gateway's own imports.
export { AzureChatCompletionRequestDto } from '@igw/contracts';
