// Jest's Node environment, with gpt-tokenizer's o200k_base encoding loaded by Node itself, once per
// Jest worker, outside the per-file module registry: every spec file that counts tokens would
// otherwise load its megabytes of source and index its 200,000-entry vocabulary again. The encoding
// is pure and keeps no state a spec can observe, so one instance per worker counts exactly as one
// per file would.
const { TestEnvironment } = require('jest-environment-node');

const O200K_BASE = '__igwO200kBaseOncePerWorker';
let o200kBase;

class NodeEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    Object.defineProperty(this.global, O200K_BASE, { get: () => (o200kBase ??= require('gpt-tokenizer/encoding/o200k_base')) });
  }
}

module.exports = NodeEnvironment;
module.exports.O200K_BASE = O200K_BASE;
