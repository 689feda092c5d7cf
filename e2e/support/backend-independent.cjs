// The e2e spec files whose first comment carries the tag `@backend-independent`: they start no
// service on the run's database or queue (they start their own embedded PostgreSQL whatever
// DATABASE_URL says, or none), so both CI passes would run them alike. They run as the Nx target
// e2e:e2e-backend-independent, which Nx caches: the second pass replays their result when no
// input changed. The tag is a promise the spec keeps: a spec that reads DATABASE_URL or REDIS_URL,
// or uses the standalone, distributed or admin-tools harnesses, must not carry it.
const { readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');

const E2E_DIR = path.resolve(__dirname, '..');
const TAG = /^\/\*\*[\s\S]*?@backend-independent\b[\s\S]*?\*\//;

function backendIndependentSpecs() {
  return readdirSync(E2E_DIR)
    .filter((name) => name.endsWith('.e2e-spec.ts'))
    .map((name) => path.join(E2E_DIR, name))
    .filter((file) => TAG.test(readFileSync(file, 'utf8')));
}

module.exports = { backendIndependentSpecs };
