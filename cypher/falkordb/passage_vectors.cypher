// Embeddings, texts and places of passages by id.
UNWIND $ids AS id
MATCH (p:Passage {id: id})
RETURN p.id AS id, p.doc_id AS doc_id, p.page AS page, p.text AS text, p.embedding AS embedding, p.table_id AS table_id
