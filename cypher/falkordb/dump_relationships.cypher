// Every relationship by its ends' keys, for canonical comparisons of whole graphs.
MATCH (a)-[r]->(b)
RETURN type(r) AS type, coalesce(a.id, a.term) AS source, coalesce(b.id, b.term) AS target,
       properties(r) AS props
ORDER BY type, source, target
