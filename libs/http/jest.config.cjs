// Unit specs of http (`npx nx test http`): no database, no Redis, no other process.
// The library: the HTTP app, body reading, direct routes, errors, auth guards, health, Swagger.
module.exports = { displayName: 'http', preset: '../../jest.preset.js', rootDir: __dirname };
