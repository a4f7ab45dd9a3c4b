// Texts and places of passages by id, of documents the caller may read: passage_vectors without
// the embeddings, which are most of what that query sends (the store sends each float as text);
// with each passage's key in the vector index beside the graph, where FalkorStore's
// passage_vectors reads the vectors.
UNWIND $ids AS id
MATCH (p:Passage {id: id})
OPTIONAL MATCH (d:Document {id: p.doc_id})
WITH p, d
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
RETURN p.id AS id, p.doc_id AS doc_id, p.page AS page, p.text AS text, p.table_id AS table_id,
       d.title AS doc_title, d.path AS doc_path, p.vkey AS vkey
