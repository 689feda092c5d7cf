// What apps/standalone's demo mode uses of the upstream emulator, reached as @igw/emulator.
export { startEmulator, type RunningEmulator } from './emulator';
