// Unit specs of standalone (`npx nx test standalone`): no database, no Redis, no other process.
module.exports = { displayName: 'standalone', preset: '../../jest.preset.js', rootDir: __dirname };
