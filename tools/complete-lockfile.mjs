// Adds to package-lock.json the optional, platform-specific packages (other OSes' and
// CPUs' native binaries) that the npm registry mirror of our machines does not carry.
// npm leaves them out of the lock when it cannot fetch their manifests, and npm 11's
// `npm ci` then refuses the lock. Recorded with their os/cpu/libc constraints, they are
// skipped on every machine they do not fit, exactly as npm would have done.
// Run after any `npm install` that changes the lock:  node tools/complete-lockfile.mjs
import { readFile, writeFile } from 'node:fs/promises';

const LOCK = new URL('../package-lock.json', import.meta.url);
const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'wasm32'];

function platformOf(name) {
  const tokens = name.toLowerCase().split(/[-/@_.]+/);
  const os = OS.find((candidate) => tokens.includes(candidate)) ?? (tokens.includes('windows') || tokens.includes('msvc') ? 'win32' : undefined);
  const cpu = CPU.find((candidate) => tokens.includes(candidate)) ??
    (tokens.includes('gnueabihf') || tokens.includes('armv7') ? 'arm' : tokens.includes('wasi') ? 'wasm32' : undefined);
  const libc = tokens.includes('musl') ? 'musl' : tokens.includes('gnu') ? 'glibc' : undefined;
  return { os, cpu, libc };
}

const lock = JSON.parse(await readFile(LOCK, 'utf8'));
const packages = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path ? `${path}/` : ''}node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    const { os, cpu, libc } = platformOf(name);
    if (!os && !cpu) continue; // not a platform binary: leave it to npm
    packages[`node_modules/${name}`] = {
      version: range.replace(/^[\^~=]/, ''),
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      optional: true,
      ...(os ? { os: [os] } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
await writeFile(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: recorded ${added} platform package(s) the registry mirror does not carry`);
