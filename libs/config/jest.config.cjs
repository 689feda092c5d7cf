// Unit specs of config (`npx nx test config`): no database, no Redis, no other process.
// The library: settings, the environment and the process (signals, locks, idle).
module.exports = { displayName: 'config', preset: '../../jest.preset.js', rootDir: __dirname };
