CREATE INDEX table_doc_id IF NOT EXISTS FOR (n:Table) ON (n.doc_id)
