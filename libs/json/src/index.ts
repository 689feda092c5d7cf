export * from './json-text';
export * from './verbatim-json';
