// The passages some documents have now, to reuse the embeddings of unchanged texts.
UNWIND $doc_ids AS doc_id
MATCH (p:Passage {doc_id: doc_id})
RETURN p.id AS id, p.text AS text, p.embedding AS embedding, p.table_id AS table_id
