// The passages a document has now, to reuse the embeddings of unchanged texts.
MATCH (p:Passage {doc_id: $doc_id})
RETURN p.id AS id, p.text AS text, p.embedding AS embedding
