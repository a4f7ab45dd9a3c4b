// The passages before and after each of many passages.
UNWIND $ids AS id
MATCH (s:Passage {id: id})-[:NEXT]-(t:Passage)
RETURN s.id AS source, t.id AS target, 1.0 AS weight
ORDER BY source, target
