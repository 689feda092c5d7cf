// Unit specs of tools-db (`npx nx test tools-db`): no database, no Redis, no other process.
// It has none yet (its tests need real services: the integration tier); the target stays for the day it does.
module.exports = { displayName: 'tools-db', preset: '../../jest.preset.js', rootDir: __dirname, passWithNoTests: true };
