#!/usr/bin/env node
// `npx igw <command>`: the admin CLI, with nothing but its own output on stdout (no npm
// banner), so `npx igw usage summary <id> | jq` works.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../../..');
const build = path.join(root, 'tools/build.mjs');
// In a checkout the build compiles only what changed since dist/ was built, so the CLI always
// matches the source; an image without the build script runs the dist/ it ships.
if (existsSync(build)) {
  const result = spawnSync(process.execPath, [build], { cwd: root, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
require(path.join(root, 'dist/tools/cli/src/main.js'));
