DROP VECTOR INDEX FOR (p:Passage) ON (p.embedding)
