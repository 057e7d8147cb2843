/**
 * The small, deterministic `lake.demo` schema every new home has, so a newcomer has data to query at once.
 * Plain arithmetic instead of random(), so every home holds exactly the same rows.
 */
const ORDER_ITEMS = `
  SELECT o AS order_id, j AS line_no,
         (['keyboard', 'mouse', 'monitor', 'laptop stand', 'usb-c cable', 'webcam', 'headset', 'desk lamp'])[1 + (o * 3 + j * 5) % 8] AS product,
         (1 + (o * j) % 5)::INTEGER AS quantity,
         (((o * 31 + j * 17) % 9000 + 100) / 100)::DECIMAL(10, 2) AS unit_price
  FROM range(1, 5001) r(o), range(1, 5) l(j)
  WHERE j <= 1 + o % 4`;

export const DEMO_TABLES: readonly { name: string; sql: string }[] = [
  {
    name: 'customers',
    sql: `
      SELECT i::INTEGER AS customer_id,
             (['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Ken', 'Margaret', 'Linus', 'Guido'])[1 + i % 10] || ' ' ||
             (['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Thompson', 'Hamilton', 'Torvalds', 'Rossum'])[1 + (i // 10) % 10] AS name,
             'customer' || i || '@example.com' AS email,
             (['DE', 'FR', 'GB', 'US', 'JP', 'BR', 'IN', 'NL'])[1 + (i * 7) % 8] AS country,
             (DATE '2023-01-01' + ((i * 13) % 700)::INTEGER) AS signed_up
      FROM range(1, 501) t(i)
      ORDER BY customer_id`,
  },
  {
    name: 'orders',
    sql: `
      WITH items AS (${ORDER_ITEMS})
      SELECT o.i::BIGINT AS order_id,
             (1 + (o.i * 37) % 500)::INTEGER AS customer_id,
             TIMESTAMP '2024-01-01 00:00:00' + to_seconds((o.i * 7919) % 31536000) AS ordered_at,
             (['placed', 'paid', 'shipped', 'delivered', 'returned'])[1 + (o.i * 3) % 5] AS status,
             sum(items.quantity * items.unit_price)::DECIMAL(12, 2) AS total
      FROM range(1, 5001) o(i) JOIN items ON items.order_id = o.i
      GROUP BY o.i
      ORDER BY order_id`,
  },
  {
    name: 'order_items',
    sql: `SELECT order_id::BIGINT AS order_id, line_no::INTEGER AS line_no, product, quantity, unit_price FROM (${ORDER_ITEMS}) ORDER BY order_id, line_no`,
  },
];
