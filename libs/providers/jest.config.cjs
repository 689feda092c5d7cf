// Unit specs of providers (`npx nx test providers`): no database, no Redis, no other process.
module.exports = { displayName: 'providers', preset: '../../jest.preset.js', rootDir: __dirname };
