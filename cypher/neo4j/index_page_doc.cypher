CREATE INDEX page_doc_id IF NOT EXISTS FOR (n:Page) ON (n.doc_id)
