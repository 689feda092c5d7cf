// Unit specs of tools-cli (`npx nx test tools-cli`): no database, no Redis, no other process.
module.exports = { displayName: 'tools-cli', preset: '../../jest.preset.js', rootDir: __dirname };
