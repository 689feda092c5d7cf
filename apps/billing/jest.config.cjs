// Unit specs of billing (`npx nx test billing`): no database, no Redis, no other process.
module.exports = { displayName: 'billing', preset: '../../jest.preset.js', rootDir: __dirname };
