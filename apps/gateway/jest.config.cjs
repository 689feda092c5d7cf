// Unit specs of gateway (`npx nx test gateway`): no database, no Redis, no other process.
module.exports = { displayName: 'gateway', preset: '../../jest.preset.js', rootDir: __dirname };
