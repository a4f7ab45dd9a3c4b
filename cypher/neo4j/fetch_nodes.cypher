// Nodes by id, any kgp label, without embeddings.
UNWIND $ids AS id
OPTIONAL MATCH (p:Passage {id: id})
OPTIONAL MATCH (g:Page {id: id})
OPTIONAL MATCH (t:Table {id: id})
OPTIONAL MATCH (d:Document {id: id})
WITH id, coalesce(p, g, t, d) AS n
WHERE n IS NOT NULL
RETURN id, labels(n)[0] AS label, n {.*, embedding: null} AS props
