CREATE INDEX FOR ()-[s:SIMILAR]-() ON (s.score)
