// One passage's vector: its length is the dimension of the graph's vectors.
MATCH (p:Passage)
WHERE p.embedding IS NOT NULL
RETURN p.embedding AS embedding
LIMIT 1
