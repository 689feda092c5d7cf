// Unit specs of contracts (`npx nx test contracts`): no database, no Redis, no other process.
module.exports = { displayName: 'contracts', preset: '../../jest.preset.js', rootDir: __dirname };
