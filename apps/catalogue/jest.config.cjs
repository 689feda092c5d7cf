// Unit specs of catalogue (`npx nx test catalogue`): no database, no Redis, no other process.
module.exports = { displayName: 'catalogue', preset: '../../jest.preset.js', rootDir: __dirname };
