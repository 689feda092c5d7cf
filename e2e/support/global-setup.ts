// Placeholder replaced below once test infrastructure exists.
export default async function globalSetup(): Promise<void> {}
