// Unit specs of tools-emulator (`npx nx test tools-emulator`): no database, no Redis, no other process.
module.exports = { displayName: 'tools-emulator', preset: '../../jest.preset.js', rootDir: __dirname };
