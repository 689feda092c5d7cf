// Unit specs of decisions (`npx nx test decisions`): no database, no Redis, no other process.
module.exports = { displayName: 'decisions', preset: '../../jest.preset.js', rootDir: __dirname };
