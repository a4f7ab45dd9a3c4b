// Nodes by id, any kgp label, without embeddings; only those of documents the caller may read,
// and of a document's groups only the caller's own (the admin sees all).
UNWIND $ids AS id
OPTIONAL MATCH (p:Passage {id: id})
OPTIONAL MATCH (g:Page {id: id})
OPTIONAL MATCH (t:Table {id: id})
OPTIONAL MATCH (d:Document {id: id})
WITH id, coalesce(p, g, t, d) AS n
WHERE n IS NOT NULL
OPTIONAL MATCH (o:Document {id: coalesce(n.doc_id, n.id)})
WITH id, n, o
WHERE $caller_reads_all OR any(g IN coalesce(o.groups, []) WHERE g IN $caller_groups)
RETURN id, labels(n)[0] AS label,
       n {.*, embedding: null,
          groups: CASE WHEN n.groups IS NULL THEN null
                       ELSE [g IN n.groups WHERE $caller_admin OR g IN $caller_groups] END} AS props
