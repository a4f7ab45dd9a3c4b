// The passages behind keys an index beside the graph found (kgp.stores.falkordb.vectors), in one row:
// the graph's key counter, by which the index tells that another process wrote, and for each
// key the graph still holds, [key, the passage's id where the caller may read its document
// ($caller_groups; $caller_reads_all reads all), else null]. A key the graph no longer holds
// gets no pair.
OPTIONAL MATCH (m:Meta {id: 'kgp'})
WITH coalesce(m.next_vkey, 1) AS next
CALL {
  UNWIND $keys AS k
  MATCH (node:Passage {vkey: k})
  OPTIONAL MATCH (d:Document {id: node.doc_id})
  WHERE NOT $caller_reads_all
  RETURN collect([
    k,
    CASE
      WHEN $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
      THEN node.id
    END
  ]) AS found
}
RETURN next, found
