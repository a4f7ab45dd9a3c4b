// The passages behind keys an index beside the graph found (kgp.stores.vectors): for each key,
// the passage's id where the graph still holds it and the caller may read its document
// ($caller_groups; $caller_reads_all reads all), else null; and on every row the graph's key
// counter, by which the index tells that another process wrote (one row of nulls where no key
// is asked).
OPTIONAL MATCH (m:Meta {id: 'kgp'})
WITH coalesce(m.next_vkey, 1) AS next
UNWIND CASE WHEN size($keys) = 0 THEN [null] ELSE $keys END AS k
OPTIONAL MATCH (node:Passage {vkey: k})
OPTIONAL MATCH (d:Document {id: node.doc_id})
WHERE NOT $caller_reads_all
RETURN next,
       k AS key,
       CASE
         WHEN node IS NOT NULL
              AND ($caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups))
         THEN node.id
       END AS id
