/**
 * Search page: a query box (simple query string) or a JSON editor for the query DSL, against a
 * collection target; results with highlights, `took`, totals and aggregations.
 */
import { api, segment } from '../api.js';
import { checkbox, el, errorNotice, jsonBlock, labelled, replace, table } from '../elements.js';
import { formatCount, formatDecimal } from '../format.js';

const DEFAULT_DSL = JSON.stringify({ query: { match_all: {} }, size: 10 }, null, 2);
const PRE_TAG = '<em>';
const POST_TAG = '</em>';

/** A highlight fragment as DOM: text with `<em>` … `</em>` turned into `mark` elements (nothing else is markup). */
function fragmentNodes(fragment) {
  const nodes = [];
  let rest = fragment;
  while (rest.length > 0) {
    const start = rest.indexOf(PRE_TAG);
    const end = start < 0 ? -1 : rest.indexOf(POST_TAG, start);
    if (start < 0 || end < 0) {
      nodes.push(rest);
      break;
    }
    nodes.push(rest.slice(0, start), el('mark', { text: rest.slice(start + PRE_TAG.length, end) }));
    rest = rest.slice(end + POST_TAG.length);
  }
  return nodes;
}

/** One hit: id, score, highlights per field, and its source on demand. */
function hitItem(hit) {
  const highlights = Object.entries(hit.highlight ?? {});
  return el(
    'li',
    { class: 'hit' },
    el('div', { class: 'meta' }, el('strong', { text: hit._id }), ` · ${hit._index} · score ${hit._score === null ? '–' : formatDecimal(hit._score, 3)}`, hit.sort ? ` · sort ${JSON.stringify(hit.sort)}` : ''),
    highlights.map(([field, fragments]) => el('div', {}, el('span', { class: 'muted', text: `${field}: ` }), fragments.map((fragment, index) => [index > 0 ? ' … ' : '', fragmentNodes(fragment)]))),
    hit._source !== undefined ? el('details', {}, el('summary', { text: 'Source' }), jsonBlock(hit._source)) : null,
  );
}

/** Aggregation results: bucket tables (with sub-aggregations as JSON) and metric values. */
function aggregationView(name, result) {
  if (Array.isArray(result?.buckets) || (result?.buckets && typeof result.buckets === 'object')) {
    const buckets = Array.isArray(result.buckets) ? result.buckets : Object.entries(result.buckets).map(([key, bucket]) => ({ key, ...bucket }));
    const subNames = [...new Set(buckets.flatMap((bucket) => Object.keys(bucket).filter((key) => !['key', 'key_as_string', 'doc_count', 'from', 'to', 'from_as_string', 'to_as_string'].includes(key))))];
    return el(
      'div',
      { 'data-aggregation': name },
      el('h3', { text: name }),
      table(
        [
          { label: 'Key', cell: (bucket) => String(bucket.key_as_string ?? bucket.key) },
          { label: 'Documents', numeric: true, cell: (bucket) => formatCount(bucket.doc_count) },
          ...subNames.map((sub) => ({ label: sub, cell: (bucket) => (bucket[sub]?.value !== undefined ? formatDecimal(bucket[sub].value) : JSON.stringify(bucket[sub] ?? null)) })),
        ],
        buckets,
        { empty: 'No buckets.' },
      ),
    );
  }
  if (result && typeof result === 'object' && Object.hasOwn(result, 'value')) {
    return el('p', { 'data-aggregation': name }, el('strong', { text: `${name}: ` }), result.value === null ? '–' : formatDecimal(result.value));
  }
  return el('div', { 'data-aggregation': name }, el('h3', { text: name }), jsonBlock(result));
}

/** The search page. */
export async function renderSearch(root, page) {
  const namespaces = await api.get('/_namespace', { signal: page.signal });
  const collections = namespaces.namespaces.flatMap((namespace) => namespace.collections);
  const target = el('input', { name: 'target', list: 'search-targets', value: collections[0] ?? '_all', autocomplete: 'off' });
  const targets = el('datalist', { id: 'search-targets' }, ['_all', ...collections].map((name) => el('option', { value: name })));
  const modeText = el('input', { type: 'radio', name: 'mode', value: 'text', checked: true });
  const modeDsl = el('input', { type: 'radio', name: 'mode', value: 'dsl' });
  const queryText = el('input', { name: 'q', type: 'search', size: 50, placeholder: 'e.g. rose +novel -"foucault"' });
  const dsl = el('textarea', { name: 'dsl', rows: 10, spellcheck: 'false', value: DEFAULT_DSL });
  const size = el('input', { name: 'size', type: 'number', min: 0, max: 10000, value: '10' });
  const highlight = checkbox('Highlight matches', true);
  const textBox = labelled('Query (simple query string)', queryText, 'Words, "phrases", +required and -excluded terms; every text field is searched.');
  const dslBox = labelled('Query DSL (JSON request body)', dsl);
  const results = el('div', { 'data-section': 'results', 'aria-live': 'polite' });
  const showMode = () => {
    textBox.hidden = !modeText.checked;
    dslBox.hidden = modeText.checked;
  };
  modeText.addEventListener('change', showMode);
  modeDsl.addEventListener('change', showMode);

  const run = async () => {
    let body;
    if (modeText.checked) {
      const text = queryText.value.trim();
      body = { query: text === '' ? { match_all: {} } : { simple_query_string: { query: text } }, size: Number(size.value) };
    } else {
      try {
        body = JSON.parse(dsl.value);
      } catch (error) {
        replace(results, errorNotice(new Error(`The request body is not valid JSON: ${error.message}`)));
        return;
      }
    }
    if (highlight.input.checked && body.highlight === undefined) body.highlight = { fields: { '*': {} }, require_field_match: false };
    const answer = await api.post(`/${segment(target.value.trim() || '_all')}/_search`, body, { signal: page.signal });
    const total = answer.hits.total;
    const aggregations = Object.entries(answer.aggregations ?? {});
    replace(
      results,
      el('p', { class: 'summary' }, el('strong', { text: `${formatCount(total.value)}${total.relation === 'gte' ? '+' : ''} hits` }), ` · took ${answer.took} ms · shards ${answer._shards.successful}/${answer._shards.total}${answer.timed_out ? ' · timed out' : ''}`),
      answer.hits.hits.length === 0 ? el('p', { class: 'muted', text: 'No hits.' }) : el('ol', { class: 'hits' }, answer.hits.hits.map(hitItem)),
      aggregations.length > 0 ? [el('h2', { text: 'Aggregations' }), aggregations.map(([name, result]) => aggregationView(name, result))] : null,
    );
  };

  const form = el(
    'form',
    {
      class: 'panel',
      'aria-label': 'Search',
      on: {
        submit: (event) => {
          event.preventDefault();
          run().catch((error) => (error?.name === 'AbortError' ? null : replace(results, errorNotice(error))));
        },
      },
    },
    el('div', { class: 'row' }, labelled('Collections', target), targets, labelled('Size', size)),
    el('fieldset', {}, el('legend', { text: 'Query as' }), el('label', { class: 'inline' }, modeText, 'Query string'), ' ', el('label', { class: 'inline' }, modeDsl, 'Query DSL (JSON)')),
    textBox,
    dslBox,
    el('div', { class: 'row' }, highlight.element, el('button', { type: 'submit', class: 'primary', text: 'Search' })),
  );
  root.append(form, results);
  showMode();
}
