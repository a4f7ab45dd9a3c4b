CREATE INDEX FOR (n:Passage) ON (n.text_hash)
