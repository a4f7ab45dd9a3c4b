CREATE INDEX passage_doc_id IF NOT EXISTS FOR (n:Passage) ON (n.doc_id)
