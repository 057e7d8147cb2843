// The analytic workload of bench/analytic.mjs: a generated decision-support schema (8 related tables, ~7.2 M rows,
// shaped like the well-known order/lineitem benchmark) and queries of the kinds analysts run over it: joins,
// group-bys, filters, subqueries (correlated, EXISTS, IN), window functions, top-N.

/** Each table's rows as SQL over range(); keys are consistent across tables, values are pseudo-random but fixed. */
export const TABLES = {
  region: `SELECT range AS r_regionkey, (['AFRICA','AMERICA','ASIA','EUROPE','MIDDLE EAST'])[range + 1] AS r_name FROM range(5)`,
  nation: `SELECT range AS n_nationkey, 'NATION_' || lpad(range::VARCHAR, 2, '0') AS n_name, range % 5 AS n_regionkey FROM range(25)`,
  supplier: `SELECT range AS s_suppkey, 'Supplier#' || lpad(range::VARCHAR, 9, '0') AS s_name, (hash(range) % 25)::INTEGER AS s_nationkey,
      ((hash(range * 3) % 1100000)::DECIMAL(12, 2) / 100 - 1000)::DECIMAL(12, 2) AS s_acctbal FROM range(10000)`,
  customer: `SELECT range AS c_custkey, 'Customer#' || lpad(range::VARCHAR, 9, '0') AS c_name, (hash(range) % 25)::INTEGER AS c_nationkey,
      ((hash(range * 5) % 1100000)::DECIMAL(12, 2) / 100 - 1000)::DECIMAL(12, 2) AS c_acctbal,
      (['AUTOMOBILE','BUILDING','FURNITURE','HOUSEHOLD','MACHINERY'])[(hash(range * 7) % 5)::INTEGER + 1] AS c_mktsegment FROM range(150000)`,
  part: `SELECT range AS p_partkey, 'part ' || (['green','blue','red','ivory','khaki','navy','peach','smoke'])[(hash(range) % 8)::INTEGER + 1] || ' ' || range AS p_name,
      'Brand#' || (1 + hash(range * 3) % 5) || (1 + hash(range * 5) % 5) AS p_brand,
      (['STANDARD','SMALL','MEDIUM','LARGE','ECONOMY','PROMO'])[(hash(range * 7) % 6)::INTEGER + 1] || ' ' || (['ANODIZED','BURNISHED','PLATED','POLISHED','BRUSHED'])[(hash(range * 11) % 5)::INTEGER + 1] || ' ' || (['TIN','NICKEL','BRASS','STEEL','COPPER'])[(hash(range * 13) % 5)::INTEGER + 1] AS p_type,
      (1 + hash(range * 17) % 50)::INTEGER AS p_size,
      (['SM','MED','LG','JUMBO','WRAP'])[(hash(range * 19) % 5)::INTEGER + 1] || ' ' || (['CASE','BOX','BAG','JAR','PKG','PACK','CAN','DRUM'])[(hash(range * 23) % 8)::INTEGER + 1] AS p_container,
      (900 + (range % 20001) / 10.0)::DECIMAL(12, 2) AS p_retailprice FROM range(200000)`,
  partsupp: `SELECT range // 4 AS ps_partkey, ((range // 4) + (range % 4) * 2500) % 10000 AS ps_suppkey, (1 + hash(range) % 9999)::INTEGER AS ps_availqty,
      (1 + (hash(range * 3) % 100000) / 100.0)::DECIMAL(12, 2) AS ps_supplycost FROM range(800000)`,
  orders: `SELECT range AS o_orderkey, (hash(range) % 150000)::BIGINT AS o_custkey, (['F','O','P'])[(hash(range * 3) % 3)::INTEGER + 1] AS o_orderstatus,
      (1000 + (hash(range * 5) % 50000000) / 100.0)::DECIMAL(12, 2) AS o_totalprice, DATE '1992-01-01' + (hash(range * 7) % 2400)::INTEGER AS o_orderdate,
      (['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'])[(hash(range * 11) % 5)::INTEGER + 1] AS o_orderpriority, 0 AS o_shippriority FROM range(1500000)`,
  lineitem: `SELECT range // 3 AS l_orderkey, (range % 3 + 1)::INTEGER AS l_linenumber, (hash(range) % 200000)::BIGINT AS l_partkey,
      (((hash(range) % 200000) + (hash(range * 3) % 4) * 2500) % 10000)::BIGINT AS l_suppkey,
      (1 + hash(range * 5) % 50)::DECIMAL(12, 2) AS l_quantity, ((1 + hash(range * 5) % 50) * (900 + ((hash(range) % 200000) % 20001) / 10.0))::DECIMAL(12, 2) AS l_extendedprice,
      ((hash(range * 7) % 11) / 100.0)::DECIMAL(12, 2) AS l_discount, ((hash(range * 11) % 9) / 100.0)::DECIMAL(12, 2) AS l_tax,
      (['A','N','R'])[(hash(range * 13) % 3)::INTEGER + 1] AS l_returnflag, (['F','O'])[(hash(range * 17) % 2)::INTEGER + 1] AS l_linestatus,
      DATE '1992-01-01' + (hash((range // 3) * 7) % 2400)::INTEGER + (1 + hash(range * 19) % 121)::INTEGER AS l_shipdate,
      DATE '1992-01-01' + (hash((range // 3) * 7) % 2400)::INTEGER + (30 + hash(range * 23) % 61)::INTEGER AS l_commitdate,
      DATE '1992-01-01' + (hash((range // 3) * 7) % 2400)::INTEGER + (1 + hash(range * 19) % 121)::INTEGER + (1 + hash(range * 29) % 30)::INTEGER AS l_receiptdate,
      (['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'])[(hash(range * 31) % 4)::INTEGER + 1] AS l_shipinstruct,
      (['REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB'])[(hash(range * 37) % 7)::INTEGER + 1] AS l_shipmode FROM range(4500000)`,
};

/** Name → SQL; tables are named schema.table (tpch.*), as a lake user writes them. */
export const QUERIES = {
  'pricing summary': `SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
      sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
      avg(l_quantity) AS avg_qty, avg(l_discount) AS avg_disc, count(*) AS count_order
    FROM tpch.lineitem WHERE l_shipdate <= DATE '1998-09-02' GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus`,
  'shipping priority (3-way join, top 10)': `SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority
    FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.lineitem ON l_orderkey = o_orderkey
    WHERE c_mktsegment = 'BUILDING' AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'
    GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10`,
  'order priority (EXISTS)': `SELECT o_orderpriority, count(*) AS order_count FROM tpch.orders
    WHERE o_orderdate >= DATE '1993-07-01' AND o_orderdate < DATE '1993-10-01'
      AND EXISTS (SELECT 1 FROM tpch.lineitem WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
    GROUP BY o_orderpriority ORDER BY o_orderpriority`,
  'local supplier volume (6-way join)': `SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
    FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.lineitem ON l_orderkey = o_orderkey
      JOIN tpch.supplier ON l_suppkey = s_suppkey AND c_nationkey = s_nationkey JOIN tpch.nation ON s_nationkey = n_nationkey
      JOIN tpch.region ON n_regionkey = r_regionkey
    WHERE r_name = 'ASIA' AND o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1995-01-01'
    GROUP BY n_name ORDER BY revenue DESC`,
  'forecasting revenue change (filter)': `SELECT sum(l_extendedprice * l_discount) AS revenue FROM tpch.lineitem
    WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24`,
  'returned items (top 20)': `SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal, n_name
    FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.lineitem ON l_orderkey = o_orderkey JOIN tpch.nation ON c_nationkey = n_nationkey
    WHERE o_orderdate >= DATE '1993-10-01' AND o_orderdate < DATE '1994-01-01' AND l_returnflag = 'R'
    GROUP BY c_custkey, c_name, c_acctbal, n_name ORDER BY revenue DESC LIMIT 20`,
  'shipping modes (CASE)': `SELECT l_shipmode, sum(CASE WHEN o_orderpriority IN ('1-URGENT', '2-HIGH') THEN 1 ELSE 0 END) AS high_line_count,
      sum(CASE WHEN o_orderpriority NOT IN ('1-URGENT', '2-HIGH') THEN 1 ELSE 0 END) AS low_line_count
    FROM tpch.orders JOIN tpch.lineitem ON o_orderkey = l_orderkey
    WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
      AND l_receiptdate >= DATE '1994-01-01' AND l_receiptdate < DATE '1995-01-01'
    GROUP BY l_shipmode ORDER BY l_shipmode`,
  'customer distribution (LEFT JOIN)': `SELECT c_count, count(*) AS custdist FROM (
      SELECT c_custkey, count(o_orderkey) AS c_count FROM tpch.customer LEFT JOIN tpch.orders ON c_custkey = o_custkey AND o_orderstatus <> 'P' GROUP BY c_custkey
    ) GROUP BY c_count ORDER BY custdist DESC, c_count DESC`,
  'promotion effect': `SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END) / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
    FROM tpch.lineitem JOIN tpch.part ON l_partkey = p_partkey WHERE l_shipdate >= DATE '1995-09-01' AND l_shipdate < DATE '1995-10-01'`,
  'small-quantity revenue (correlated subquery)': `SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM tpch.lineitem JOIN tpch.part ON p_partkey = l_partkey
    WHERE p_brand = 'Brand#23' AND p_container = 'MED BOX' AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM tpch.lineitem WHERE l_partkey = p_partkey)`,
  'large volume customers (IN, HAVING)': `SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) AS qty
    FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.lineitem ON o_orderkey = l_orderkey
    WHERE o_orderkey IN (SELECT l_orderkey FROM tpch.lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 140)
    GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice ORDER BY o_totalprice DESC, o_orderdate LIMIT 100`,
  'discounted revenue (OR of filters)': `SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue FROM tpch.lineitem JOIN tpch.part ON p_partkey = l_partkey
    WHERE (p_brand = 'Brand#12' AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') AND l_quantity BETWEEN 1 AND 11 AND p_size BETWEEN 1 AND 5)
       OR (p_brand = 'Brand#23' AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') AND l_quantity BETWEEN 10 AND 20 AND p_size BETWEEN 1 AND 10)
       OR (p_brand = 'Brand#34' AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') AND l_quantity BETWEEN 20 AND 30 AND p_size BETWEEN 1 AND 15)`,
  'important stock (HAVING over a scalar subquery)': `SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value
    FROM tpch.partsupp JOIN tpch.supplier ON ps_suppkey = s_suppkey JOIN tpch.nation ON s_nationkey = n_nationkey WHERE n_name = 'NATION_07'
    GROUP BY ps_partkey HAVING sum(ps_supplycost * ps_availqty) > (
      SELECT sum(ps_supplycost * ps_availqty) * 0.0001 FROM tpch.partsupp JOIN tpch.supplier ON ps_suppkey = s_suppkey JOIN tpch.nation ON s_nationkey = n_nationkey WHERE n_name = 'NATION_07')
    ORDER BY value DESC LIMIT 50`,
  'top customers per nation (window)': `SELECT n_name, c_name, revenue, rank FROM (
      SELECT n_name, c_name, sum(o_totalprice) AS revenue, rank() OVER (PARTITION BY n_name ORDER BY sum(o_totalprice) DESC) AS rank
      FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.nation ON c_nationkey = n_nationkey GROUP BY n_name, c_name
    ) WHERE rank <= 3 ORDER BY n_name, rank`,
  'monthly revenue with running total (window)': `SELECT month, revenue, sum(revenue) OVER (ORDER BY month) AS running, revenue / lag(revenue) OVER (ORDER BY month) AS growth FROM (
      SELECT date_trunc('month', l_shipdate) AS month, sum(l_extendedprice * (1 - l_discount)) AS revenue FROM tpch.lineitem GROUP BY 1
    ) ORDER BY month`,
  'distinct customers per segment and year': `SELECT c_mktsegment, year(o_orderdate) AS year, count(DISTINCT o_custkey) AS customers, count(*) AS orders
    FROM tpch.orders JOIN tpch.customer ON o_custkey = c_custkey GROUP BY ALL ORDER BY c_mktsegment, year`,
  'supplier ranking by part type (window over a join)': `SELECT p_type, s_name, total FROM (
      SELECT p_type, s_name, sum(ps_availqty) AS total, row_number() OVER (PARTITION BY p_type ORDER BY sum(ps_availqty) DESC, s_name) AS rn
      FROM tpch.partsupp JOIN tpch.part ON ps_partkey = p_partkey JOIN tpch.supplier ON ps_suppkey = s_suppkey GROUP BY p_type, s_name
    ) WHERE rn = 1 ORDER BY p_type`,
  'late shipments by mode and month': `SELECT l_shipmode, date_trunc('month', l_receiptdate) AS month, count(*) FILTER (WHERE l_receiptdate > l_commitdate) AS late, count(*) AS lines
    FROM tpch.lineitem WHERE l_receiptdate >= DATE '1996-01-01' AND l_receiptdate < DATE '1997-01-01' GROUP BY ALL ORDER BY l_shipmode, month`,
};
