// Unit specs of persistence (`npx nx test persistence`): no database, no Redis, no other process.
module.exports = { displayName: 'persistence', preset: '../../jest.preset.js', rootDir: __dirname };
