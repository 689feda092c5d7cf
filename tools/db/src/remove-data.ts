// Usage: npm run data:remove              this clone's data: DATA_DIR (default .data) and its embedded PostgreSQL cluster
//        npm run data:remove -- --orphans the clusters under /var/lib/inference-gateway/clusters/ whose clone is gone
// Started as root, the standalone app keeps its PostgreSQL cluster in /var/lib/inference-gateway/clusters/
// when the `postgres` user cannot enter the clone: deleting the clone leaves that cluster behind.
import { removeEmbeddedData, removeOrphanedClusters } from '@igw/persistence';

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const log = (line: string) => process.stdout.write(`${line}\n`);
  if (args.length === 1 && args[0] === '--orphans') {
    const { removed, unknown } = await removeOrphanedClusters(log);
    for (const folder of removed) log(`removed ${folder}`);
    if (removed.length === 0) log('no cluster whose data folder is gone');
    for (const folder of unknown) log(`kept ${folder}: it does not record its data folder (made by an older version); remove it with rm -rf if no clone of yours uses it`);
    return 0;
  }
  if (args.length > 0) {
    process.stderr.write('Usage: npm run data:remove [-- --orphans]\n');
    return 2;
  }
  const dataDir = process.env.DATA_DIR?.trim() || '.data';
  const removed = await removeEmbeddedData(dataDir, log);
  for (const folder of removed) log(`removed ${folder}`);
  if (removed.length === 0) log(`nothing to remove: ${dataDir} does not exist`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
