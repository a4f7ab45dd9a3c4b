// A stored embedding for each text hash that some passage has, so an identical text is never
// embedded twice (and identical texts always share one vector).
UNWIND $hashes AS h
MATCH (p:Passage {text_hash: h})
WITH h, collect(p)[0] AS p
RETURN h AS hash, p.embedding AS embedding
