CREATE FULLTEXT INDEX FOR (p:Passage) ON (p.text)
