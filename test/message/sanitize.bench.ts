// Micro-benchmark of `sanitize` on the track() hot path: `npx vitest bench --run test/message/sanitize.bench.ts`.
import { bench, describe } from 'vitest';
import { sanitize } from '../../src/message/validate';

const product = (i: number) => ({
  product_id: 'p-' + i,
  sku: 'SKU-' + i,
  name: 'Product number ' + i,
  price: 19.99 + i,
  quantity: 1 + (i % 3),
  category: 'Apparel',
  url: 'https://shop.example/p/' + i,
  tags: ['a', 'b', 'c'],
});
// A typical track() call: a few flat properties.
const small = { fields: { event: 'Button Clicked', properties: { label: 'Buy', position: 3, variant: 'blue', premium: false } } };
// An ecommerce call: an order with ten products and a nested address.
const order = {
  fields: {
    event: 'Order Completed',
    properties: { order_id: 'o-1', total: 220.5, currency: 'EUR', products: Array.from({ length: 10 }, (_, i) => product(i)), shipping: { city: 'Lyon', zip: '69001', lines: ['1 rue A', 'Bat B'] } },
  },
};
// One object referenced twice on each of 16 levels (65,536 paths; 34 distinct objects).
const dag = (depth: number) => {
  let o: object = { leaf: 'x' };
  for (let i = 0; i < depth; i++) o = { a: o, b: o };
  return o;
};
const shared16 = dag(16);

describe('sanitize', () => {
  bench('small track properties', () => void sanitize(small));
  bench('order with 10 products', () => void sanitize(order));
  bench('shared references, 16 levels of 2', () => {
    try {
      sanitize({ fields: shared16 });
    } catch {
      // over the message limit
    }
  });
});
