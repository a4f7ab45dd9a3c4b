// The passages behind keys an index beside the graph found (kgp.stores.vectors): for each key
// the graph still holds, the passage's id where the caller may read its document
// ($caller_groups; $caller_reads_all reads all), else null. A key the graph no longer holds
// gets no row (the index drops it).
UNWIND $keys AS k
MATCH (node:Passage {vkey: k})
OPTIONAL MATCH (d:Document {id: node.doc_id})
WHERE NOT $caller_reads_all
RETURN k AS key,
       CASE
         WHEN $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
         THEN node.id
       END AS id
