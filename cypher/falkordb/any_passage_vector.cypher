// One passage's vector: its length is the dimension of a graph whose vector index was set
// aside before the server stopped (FalkorStore.close), to build the index again at a start.
MATCH (p:Passage)
WHERE p.embedding IS NOT NULL
RETURN p.embedding AS embedding
LIMIT 1
