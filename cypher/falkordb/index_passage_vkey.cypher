CREATE INDEX FOR (p:Passage) ON (p.vkey)
