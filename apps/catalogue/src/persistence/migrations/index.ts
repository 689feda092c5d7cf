import { InitCatalogue1795270722484 } from './1795270722484-init-catalogue';
export const CATALOGUE_MIGRATIONS = [InitCatalogue1795270722484];
