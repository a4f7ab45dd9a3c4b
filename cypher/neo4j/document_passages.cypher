// The passages some documents have now, with their places, texts and embeddings (documents the
// caller may read).
UNWIND $doc_ids AS wanted
OPTIONAL MATCH (d:Document {id: wanted})
WITH wanted, d
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (p:Passage {doc_id: wanted})
RETURN p.id AS id, p.doc_id AS doc_id, p.page AS page, p.text AS text, p.embedding AS embedding,
       p.table_id AS table_id
