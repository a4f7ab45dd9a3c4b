CREATE FULLTEXT INDEX passage_text IF NOT EXISTS
FOR (p:Passage) ON EACH [p.text]
