// What other projects use of the catalogue, reached as @igw/catalogue-app: apps/standalone starts
// it, tools/db generates and checks its migrations from its persistence declaration.
export { CATALOGUE_MOUNTED_PREFIXES, startCatalogue } from './catalogue.app';
export { CatalogueModule } from './catalogue.module';
export { cataloguePersistence } from './persistence/catalogue.persistence';
