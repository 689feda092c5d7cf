export * from './service-logger';
export * from './metrics';
export * from './series';
export * from './metrics.controller';
export * from './secrets';
export * from './tracing';
