// Unit specs of domain (`npx nx test domain`): no database, no Redis, no other process.
module.exports = { displayName: 'domain', preset: '../../jest.preset.js', rootDir: __dirname };
