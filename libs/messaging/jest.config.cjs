// Unit specs of messaging (`npx nx test messaging`): no database, no Redis, no other process.
// It has none yet (its tests need real services: the integration tier); the target stays for the day it does.
module.exports = { displayName: 'messaging', preset: '../../jest.preset.js', rootDir: __dirname, passWithNoTests: true };
