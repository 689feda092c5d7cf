import { TrackCatalogueSources1795272010976 } from './1795272010976-track-catalogue-sources';
import { InitCatalogue1795270722484 } from './1795270722484-init-catalogue';
export const CATALOGUE_MIGRATIONS = [InitCatalogue1795270722484, TrackCatalogueSources1795272010976];
