// neighbours for a caller reading every passage: no document is checked, and keywords over
// $max_df are skipped by their df alone, which counts every passage of theirs (admin only, see
// ADMIN_QUERIES; docs/decisions/0012).
UNWIND $ids AS id
WITH id
WHERE 'similar' IN $kinds
MATCH (s:Passage {id: id})
MATCH (s)-[r:SIMILAR]-(t:Passage)
WITH s.id AS source, t.id AS target, max(r.score) AS weight
ORDER BY source, weight DESC, target
WITH source, collect({target: target, weight: weight})[0..$limit] AS hits
UNWIND hits AS hit
RETURN 'similar' AS kind, source, hit.target AS target, hit.weight AS weight
UNION ALL
UNWIND $ids AS id
WITH id
WHERE 'next' IN $kinds
MATCH (s:Passage {id: id})
MATCH (s)-[:NEXT]-(t:Passage)
WITH s.id AS source, t.id AS target
ORDER BY source, target
RETURN 'next' AS kind, source, target, 1.0 AS weight
UNION ALL
UNWIND $ids AS id
WITH id
WHERE 'keyword' IN $kinds
MATCH (s:Passage {id: id})
MATCH (s)-[:HAS_KEYWORD]->(k:Keyword)
WITH s, k
WHERE k.df <= $max_df
MATCH (k)<-[:HAS_KEYWORD]-(t:Passage)
WHERE t <> s
WITH s.id AS source, t.id AS target, count(k) AS shared
ORDER BY source, shared DESC, target
WITH source, collect({target: target, weight: shared})[0..$limit] AS hits
UNWIND hits AS hit
RETURN 'keyword' AS kind, source, hit.target AS target, toFloat(hit.weight) AS weight
