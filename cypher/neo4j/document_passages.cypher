// The passages some documents have now, with their places, texts and embeddings.
UNWIND $doc_ids AS wanted
MATCH (p:Passage {doc_id: wanted})
RETURN p.id AS id, p.doc_id AS doc_id, p.page AS page, p.text AS text, p.embedding AS embedding,
       p.table_id AS table_id
