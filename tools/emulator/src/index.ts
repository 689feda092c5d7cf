// What other projects use of the upstream emulator, reached as @igw/emulator: apps/standalone's
// demo mode starts it; integration specs start it and make its images and seeded numbers.
export { startEmulator, type RunningEmulator } from './emulator';
export { makePng } from './media/png';
export { seededRandom } from './seeded-random';
