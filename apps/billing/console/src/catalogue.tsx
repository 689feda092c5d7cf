import { useState } from 'preact/hooks';
import { api, type Catalogue, type CatalogueModel } from './api';
import { ErrorNote, formatNumber, Section, useLoad } from './ui';

const perText = (per: number): string => (per === 1_000_000 ? '/M' : per === 1_000 ? '/K' : per === 1 ? '' : `/${formatNumber(per)}`);
const unitText = (unit: string): string => unit.replace(/_tokens$/, '').replace(/_/g, ' ');

/** Every base price (tiers for long prompts aside), e.g. "input $0.15/M". */
function prices(model: CatalogueModel): string[] {
  return model.prices.filter((price) => price.promptTokensAbove === undefined).map((price) => `${unitText(price.unit)} $${price.price}${perText(price.per)}`);
}

/** The prices a reader compares first: the uncached ones; the rest are one hover away. */
function PriceCell({ model }: { model: CatalogueModel }) {
  const all = prices(model);
  const main = model.prices.filter((price) => price.promptTokensAbove === undefined && !price.unit.startsWith('cache')).map((price) => `${unitText(price.unit)} $${price.price}${perText(price.per)}`);
  const more = all.length - main.length;
  return (
    <span title={all.join('\n')}>
      {main.join(', ')}
      {more > 0 && <span class="muted"> (+{more} more)</span>}
    </span>
  );
}

export function CataloguePage() {
  const catalogue = useLoad(() => api<Catalogue>('GET', 'console/api/catalogue'), []);
  const [filter, setFilter] = useState('');
  const [onlyConfigured, setOnlyConfigured] = useState(false);
  const needle = filter.trim().toLowerCase();
  const models = (catalogue.data?.models ?? []).filter(
    (model) =>
      (!onlyConfigured || model.configured === true) &&
      (!needle || [model.id, model.name, model.developer, ...model.aliases, ...model.capabilities].some((text) => text.toLowerCase().includes(needle))),
  );
  const gateway = catalogue.data?.gateway;
  return (
    <Section
      title="Catalogue"
      actions={
        <div class="toolbar">
          <input type="search" placeholder="Filter models" aria-label="Filter models" value={filter} onInput={(event) => setFilter((event.target as HTMLInputElement).value)} />
          <label class="check">
            <input type="checkbox" checked={onlyConfigured} onChange={(event) => setOnlyConfigured((event.target as HTMLInputElement).checked)} />
            Configured only
          </label>
        </div>
      }
    >
      <ErrorNote error={catalogue.error} />
      {catalogue.data && (
        <p class="muted small" data-testid="catalogue-status">
          Revision {catalogue.data.revision}, {catalogue.data.models.length} models.{' '}
          {gateway
            ? `A gateway reports providers configured: ${gateway.providers.length > 0 ? gateway.providers.join(', ') : 'none'}.`
            : 'No gateway answered, so whether a provider is configured is unknown.'}
        </p>
      )}
      <table class="table" data-testid="catalogue-table">
        <thead>
          <tr>
            <th>Model</th>
            <th>Type</th>
            <th class="num">Context</th>
            <th>Capabilities</th>
            <th>Price (USD)</th>
            <th>Providers</th>
            <th>Configured</th>
          </tr>
        </thead>
        <tbody>
          {models.map((model) => (
            <tr key={model.id} data-model={model.id} data-configured={String(model.configured)}>
              <td>
                <div>{model.name}</div>
                <div class="mono small muted">{model.id}</div>
              </td>
              <td class="small">{model.type.replace(/^[^/]+\//, '')}</td>
              <td class="num">{model.contextLength ? formatNumber(model.contextLength) : ''}</td>
              <td class="small">{model.capabilities.join(', ')}</td>
              <td class="small">
                <PriceCell model={model} />
              </td>
              <td class="small">{model.providers.join(', ')}</td>
              <td>
                {model.configured === null ? (
                  <span class="muted">unknown</span>
                ) : model.configured ? (
                  <span class="badge active">yes</span>
                ) : (
                  <span class="badge suspended">no</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
