// Schema 7: up to $limit passages without a vector key get the next keys of the graph's counter
// (kgp.stores.falkordb.vectors); how many did (0: every passage has one).
MATCH (p:Passage)
WHERE p.vkey IS NULL
WITH p
LIMIT $limit
WITH collect(p) AS passages
MERGE (m:Meta {id: 'kgp'})
WITH passages, m, coalesce(m.next_vkey, 1) AS base
SET m.next_vkey = base + size(passages)
WITH passages, base
UNWIND range(0, size(passages) - 1) AS j
WITH passages[j] AS p, base + j AS key
SET p.vkey = key
RETURN count(p) AS n
