// knn_passages for a caller who reads every passage (the admin, a covered read): no document is
// read. One row: the graph's key counter, and [key, passage id] for each key the graph still
// holds.
OPTIONAL MATCH (m:Meta {id: 'kgp'})
WITH coalesce(m.next_vkey, 1) AS next
CALL {
  UNWIND $keys AS k
  MATCH (node:Passage {vkey: k})
  RETURN collect([k, node.id]) AS found
}
RETURN next, found
