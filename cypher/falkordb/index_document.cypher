CREATE INDEX FOR (n:Document) ON (n.id)
