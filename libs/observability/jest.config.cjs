// Unit specs of observability (`npx nx test observability`): no database, no Redis, no other process.
// The library: metrics, series, tracing, secret redaction and the service logger.
module.exports = { displayName: 'observability', preset: '../../jest.preset.js', rootDir: __dirname };
