/**
 * `GET /_console`: the operators' web console, static files served by every node. The files are
 * plain ES modules, HTML and CSS under `src/console/` plus the charting library's one ES module
 * and style sheet from `node_modules` (uPlot); the list below is fixed, each file is its own
 * route of a fixed path, and every file is read once when the routes are registered, so a request
 * never reaches the file system and no path can lead outside the list.
 *
 * These routes are `public` (src/api/roles.ts): the login form must load before the user has
 * typed a key. Everything the page shows comes from the node's HTTP API, called by the page with
 * the user's key in `Authorization: Bearer` (see src/console/api.js), so the files themselves
 * hold nothing worth protecting. The responses forbid framing and any script, style or
 * connection that does not come from the node itself.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { querySchema } from '../params.ts';

/** Where the console's own files live. */
const CONSOLE_DIRECTORY = new URL('../../console/', import.meta.url);

/** The console's entry page. */
export const CONSOLE_PATH = '/_console';

/** Content types by file extension. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/** The console's own files, relative to `src/console/`, each served at `/_console/<file>`. */
const CONSOLE_FILES: readonly string[] = [
  'console.css',
  'icon.svg',
  'app.js',
  'api.js',
  'elements.js',
  'format.js',
  'dialogs.js',
  'charts.js',
  'pages/cluster.js',
  'pages/node-details.js',
  'pages/collections.js',
  'pages/shard-map.js',
  'pages/search.js',
  'pages/changes.js',
  'pages/jobs.js',
  'pages/trash.js',
  'pages/settings.js',
  'pages/keys.js',
];

/** Files of npm packages the console loads: URL path under `/_console/vendor/` → module specifier. */
const VENDOR_FILES: Readonly<Record<string, string>> = {
  'uplot.js': 'uplot/dist/uPlot.esm.js',
  'uplot.css': 'uplot/dist/uPlot.min.css',
};

/** Headers of every console response: no framing, nothing loaded from elsewhere, revalidate on each load. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/** One servable file: its URL path, its content type and its bytes. */
interface ConsoleAsset {
  path: string;
  contentType: string;
  body: Buffer;
}

/** The URL path of every console file, the entry page first (for the security matrix and tests). */
export function consoleAssetPaths(): string[] {
  return [CONSOLE_PATH, ...CONSOLE_FILES.map((file) => `${CONSOLE_PATH}/${file}`), ...Object.keys(VENDOR_FILES).map((file) => `${CONSOLE_PATH}/vendor/${file}`)];
}

/** The content type of a file name, by its extension. */
function contentTypeOf(file: string): string {
  const extension = file.slice(file.lastIndexOf('.') + 1);
  const type = CONTENT_TYPES[extension];
  if (type === undefined) throw new Error(`console file [${file}] has no known content type`);
  return type;
}

/** Reads every console file into memory. */
async function loadAssets(): Promise<ConsoleAsset[]> {
  const require = createRequire(import.meta.url);
  const sources: Array<{ path: string; file: string }> = [
    { path: CONSOLE_PATH, file: fileURLToPath(new URL('index.html', CONSOLE_DIRECTORY)) },
    ...CONSOLE_FILES.map((file) => ({ path: `${CONSOLE_PATH}/${file}`, file: fileURLToPath(new URL(file, CONSOLE_DIRECTORY)) })),
    ...Object.entries(VENDOR_FILES).map(([name, specifier]) => ({ path: `${CONSOLE_PATH}/vendor/${name}`, file: require.resolve(specifier) })),
  ];
  return Promise.all(sources.map(async ({ path, file }) => ({ path, contentType: contentTypeOf(file), body: await readFile(file) })));
}

/** The console routes: one `public` GET route per file. */
export async function consoleRoutes(instance: FastifyInstance): Promise<void> {
  const assets = await loadAssets();
  const NoQuery = querySchema({});
  for (const asset of assets) {
    instance.get(asset.path, { config: { role: 'public' }, schema: { querystring: NoQuery } }, async (_request, reply) =>
      reply.headers(SECURITY_HEADERS).type(asset.contentType).send(asset.body),
    );
  }
}
