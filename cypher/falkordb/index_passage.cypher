CREATE INDEX FOR (n:Passage) ON (n.id, n.doc_id)
