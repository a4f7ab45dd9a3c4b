CREATE INDEX FOR (n:Table) ON (n.id, n.doc_id)
