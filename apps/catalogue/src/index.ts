// What other projects (apps/standalone) use of the catalogue, reached as @igw/catalogue-app.
export { CATALOGUE_MOUNTED_PREFIXES, startCatalogue } from './catalogue.app';
export { CatalogueModule } from './catalogue.module';
