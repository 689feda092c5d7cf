export * from './money/decimal';
export * from './money/credits';
export * from './money/pricing';
export * from './catalogue/catalogue-index';
export * from './catalogue/catalogue-query';
export * from './money/chat-units';
export * from './tools/tool-schemas';
export * from './catalogue/model-apis';
