// Unit specs of json (`npx nx test json`): no database, no Redis, no other process.
// The library: JSON text encoding and verbatim JSON.
module.exports = { displayName: 'json', preset: '../../jest.preset.js', rootDir: __dirname };
