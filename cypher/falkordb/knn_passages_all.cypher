// knn_passages for a caller who reads every passage (the admin, a covered read): no document is
// read. The passages behind keys an index beside the graph found; a key the graph no longer
// holds gets no row.
UNWIND $keys AS k
MATCH (node:Passage {vkey: k})
RETURN k AS key, node.id AS id
