// Unit specs of tokenizer (`npx nx test tokenizer`): no database, no Redis, no other process.
module.exports = { displayName: 'tokenizer', preset: '../../jest.preset.js', rootDir: __dirname };
