CREATE INDEX similar_score IF NOT EXISTS FOR ()-[s:SIMILAR]-() ON (s.score)
