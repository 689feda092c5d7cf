export * from './provider.types';
export * from './upstream.errors';
export * from './registry';
export * from './routing';
