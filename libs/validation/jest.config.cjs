// Unit specs of validation (`npx nx test validation`): no database, no Redis, no other process.
// The library: the validation engine: field decorators, the compiled acceptor, the pipe, issue wording.
module.exports = { displayName: 'validation', preset: '../../jest.preset.js', rootDir: __dirname };
