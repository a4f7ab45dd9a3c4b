// The neighbourhood N(v) of many passages in one query: SIMILAR (either direction, best
// first), NEXT (before and after) and shared keywords (df <= $max_df, most shared first), at most
// $limit per source and kind; $kinds picks the edge kinds. One store call per traversal hop.
// (In the keyword branch, the WITH before the df filter keeps FalkorDB's planner starting from
// the id index instead of scanning every Keyword: 23 ms instead of 380 ms for 30 passages.)
UNWIND $ids AS id
WITH id
WHERE 'similar' IN $kinds
MATCH (s:Passage {id: id})-[r:SIMILAR]-(t:Passage)
WITH s.id AS source, t.id AS target, max(r.score) AS weight
ORDER BY source, weight DESC, target
WITH source, collect({target: target, weight: weight})[0..$limit] AS hits
UNWIND hits AS hit
RETURN 'similar' AS kind, source, hit.target AS target, hit.weight AS weight
UNION ALL
UNWIND $ids AS id
WITH id
WHERE 'next' IN $kinds
MATCH (s:Passage {id: id})-[:NEXT]-(t:Passage)
WITH s.id AS source, t.id AS target
ORDER BY source, target
RETURN 'next' AS kind, source, target, 1.0 AS weight
UNION ALL
UNWIND $ids AS id
WITH id
WHERE 'keyword' IN $kinds
MATCH (s:Passage {id: id})-[:HAS_KEYWORD]->(k:Keyword)
WITH s, k
WHERE k.df <= $max_df
MATCH (k)<-[:HAS_KEYWORD]-(t:Passage)
WHERE t <> s
WITH s.id AS source, t.id AS target, count(k) AS shared
ORDER BY source, shared DESC, target
WITH source, collect({target: target, weight: shared})[0..$limit] AS hits
UNWIND hits AS hit
RETURN 'keyword' AS kind, source, hit.target AS target, toFloat(hit.weight) AS weight
