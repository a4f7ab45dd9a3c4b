CREATE INDEX FOR (n:Keyword) ON (n.term)
