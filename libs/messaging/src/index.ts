export * from './messaging.options';
export * from './messaging.errors';
export * from './messaging.service';
export * from './messaging.module';
export { createBullBackend, redisConnectionOptions } from './backend';
export { dropRedisNamespace } from './redis-namespace';
export * from './payloads/queues';
export * from './payloads/connections-report';
export * from './payloads/topics';
