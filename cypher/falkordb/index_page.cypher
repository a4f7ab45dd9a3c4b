CREATE INDEX FOR (n:Page) ON (n.id, n.doc_id)
