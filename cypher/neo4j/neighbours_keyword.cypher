// Passages sharing keywords with each of many passages; keywords whose df exceeds $max_df are
// not expanded. Weight: the number of shared keywords. At most $limit per source.
// (The WITH before the df filter keeps FalkorDB's planner starting from the id index instead of
// scanning every Keyword: 23 ms instead of 380 ms for 30 passages of 3,000.)
UNWIND $ids AS id
MATCH (s:Passage {id: id})-[:HAS_KEYWORD]->(k:Keyword)
WITH s, k
WHERE k.df <= $max_df
MATCH (k)<-[:HAS_KEYWORD]-(t:Passage)
WHERE t <> s
WITH s.id AS source, t.id AS target, count(k) AS shared
ORDER BY source, shared DESC, target
WITH source, collect({target: target, weight: shared})[0..$limit] AS hits
UNWIND hits AS hit
RETURN source, hit.target AS target, toFloat(hit.weight) AS weight
