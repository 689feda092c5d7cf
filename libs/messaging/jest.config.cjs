// Unit specs of messaging (`npx nx test messaging`): no database, no Redis, no other process.
// They cover the message shapes and batching; the queues themselves need real services (the integration tier).
module.exports = { displayName: 'messaging', preset: '../../jest.preset.js', rootDir: __dirname };
