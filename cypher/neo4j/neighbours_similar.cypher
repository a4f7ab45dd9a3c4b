// SIMILAR neighbours (either direction) of many passages, best first, at most $limit each.
UNWIND $ids AS id
MATCH (s:Passage {id: id})-[r:SIMILAR]-(t:Passage)
WITH s.id AS source, t.id AS target, max(r.score) AS weight
ORDER BY source, weight DESC, target
WITH source, collect({target: target, weight: weight})[0..$limit] AS hits
UNWIND hits AS hit
RETURN source, hit.target AS target, hit.weight AS weight
