-- Bytes and blocks per category and rule live right after event ?2 on device row ?1.
SELECT category, category_rule, COUNT(*), SUM(size) FROM {LIVE} GROUP BY category, category_rule ORDER BY 4 DESC, 1, 2
