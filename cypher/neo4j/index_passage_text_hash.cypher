CREATE INDEX passage_text_hash IF NOT EXISTS FOR (p:Passage) ON (p.text_hash)
