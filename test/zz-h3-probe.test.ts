import { after, before, test } from 'node:test';
import { call, startServer, type TroveServer } from './harness.ts';
let server: TroveServer;
before(async () => {
  server = await startServer();
  await call(server, 'PUT', '/products', { json: { mappings: { properties: { title: { type: 'text' }, price: { type: 'double' } } } } });
  await call(server, 'PUT', '/products/_doc/1', { json: { title: 'Red running shoes', price: 80 } });
  await call(server, 'PUT', '/products/_doc/4', { json: { title: 'Trail running shoes', price: 140 } });
});
after(async () => { await server.stop?.(); });
test('probe', async () => {
  for (const url of ['/products/_search?q=title:shoes&sort=price:desc&_source=title', '/products/_search?sort=price:asc&from=1&size=1&lane=interactive']) {
    const r = await call(server, 'GET', url);
    console.log(url, r.status, r.text.slice(0, 400));
  }
});
