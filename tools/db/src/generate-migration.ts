// Usage: npm run db:generate -- <service> <MigrationName>
// Writes a migration with whatever the service's entities need beyond its existing
// migrations, then registers it in the folder's index.ts.
import { writeFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createScratchDatabase, measureSchemaDrift } from '@igw/persistence';
import { SERVICE_SCHEMAS } from './service-schemas';

async function main(): Promise<void> {
  const [service, name] = process.argv.slice(2);
  const target = SERVICE_SCHEMAS[service];
  if (!target || !name || !/^[A-Z][A-Za-z0-9]+$/.test(name)) {
    throw new Error(`Usage: npm run db:generate -- <${Object.keys(SERVICE_SCHEMAS).join('|')}> <PascalCaseName>`);
  }
  const scratch = await createScratchDatabase(process.env.DATABASE_URL);
  try {
    const drift = await measureSchemaDrift(scratch.url, target.persistence);
    if (drift.up.length === 0) {
      console.log(`${service}: entities and migrations already agree; nothing to generate.`);
      return;
    }
    const timestamp = Date.now();
    const className = `${name}${timestamp}`;
    const fileName = `${timestamp}-${name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()}.ts`;
    const quote = (query: string) => `    await queryRunner.query(\`${query.replace(/[`\\]/g, (c) => `\\${c}`).replace(/\$\{/g, "\\${")}\`);`;
    const source = `import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(queryRunner: QueryRunner): Promise<void> {
${drift.up.map(quote).join('\n')}
  }

  async down(queryRunner: QueryRunner): Promise<void> {
${drift.down.map(quote).join('\n')}
  }
}
`;
    // npm runs scripts from the repository root, where the sources are.
    const dir = path.resolve(process.cwd(), target.migrationsDir);
    await writeFile(path.join(dir, fileName), source);
    const indexFile = path.join(dir, 'index.ts');
    const index = await readFile(indexFile, 'utf8');
    const importLine = `import { ${className} } from './${fileName.replace(/\.ts$/, '')}';\n`;
    const updated = importLine + index.replace(/= \[(.*)\];/s, (_, list: string) => `= [${list.trim() ? `${list.trim().replace(/,$/, '')}, ` : ''}${className}];`);
    await writeFile(indexFile, updated);
    console.log(`${service}: wrote ${path.join(target.migrationsDir, fileName)} (${drift.up.length} statements)`);
  } finally {
    await scratch.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
