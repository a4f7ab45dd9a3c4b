// Every node without its embedding, for canonical comparisons of whole graphs.
MATCH (n)
RETURN labels(n)[0] AS label, coalesce(n.id, n.term) AS key, n {.*, embedding: null} AS props
ORDER BY label, key
