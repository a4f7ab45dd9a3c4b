// knn_passages for a caller who reads every passage (the admin, a covered read): no document is
// read. For each key the passage's id where the graph still holds it, else null; on every row
// the graph's key counter (one row of nulls where no key is asked).
OPTIONAL MATCH (m:Meta {id: 'kgp'})
WITH coalesce(m.next_vkey, 1) AS next
UNWIND CASE WHEN size($keys) = 0 THEN [null] ELSE $keys END AS k
OPTIONAL MATCH (node:Passage {vkey: k})
RETURN next, k AS key, node.id AS id
