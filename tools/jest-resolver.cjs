// Jest resolves a require with the 'require', 'default' and 'node' export conditions. Some
// ESM-only packages (music-metadata and its file-type) publish only 'import' and 'module-sync',
// the condition Node's own require(esm) uses; a name that does not resolve otherwise is tried
// again with it, so every package that resolves today keeps its file.
module.exports = (request, options) => {
  try {
    return options.defaultResolver(request, options);
  } catch (error) {
    try {
      return options.defaultResolver(request, { ...options, conditions: [...(options.conditions ?? []), 'module-sync'] });
    } catch {
      throw error;
    }
  }
};
