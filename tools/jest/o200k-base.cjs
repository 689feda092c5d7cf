// What `gpt-tokenizer/encoding/o200k_base` resolves to in Jest: the one instance node-environment.cjs loads per worker.
module.exports = globalThis.__igwO200kBaseOncePerWorker;
