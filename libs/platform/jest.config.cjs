// Unit specs of platform (`npx nx test platform`): no database, no Redis, no other process.
module.exports = { displayName: 'platform', preset: '../../jest.preset.js', rootDir: __dirname };
