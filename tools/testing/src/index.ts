// The helpers the integration and e2e tiers share, reached as @igw/testing: scratch databases
// and queue prefixes, polling, a TCP proxy that can stop answering, finished queue jobs and a
// webhook receiver. Integration specs beside an app's code import them from here.
export { TEST_DATABASE_SERVER_VARIABLE } from './constants';
export { eventually } from './eventually';
export { finishedJobs, type FinishedJob } from './queue-jobs';
export { startTcpProxy, type TcpProxy } from './tcp-proxy';
export { createTestDatabase, dropQueueData, queryRows, testQueueBackend, uniqueQueuePrefix } from './test-environment';
export { startWebhookReceiver, verifyWebhookSignature, type ReceivedWebhook, type WebhookReceiver } from './webhook-receiver';
