// The SIMILAR out-edges (the k nearest) of passages by id, with their scores.
UNWIND $ids AS id
MATCH (p:Passage {id: id})-[s:SIMILAR]->(q:Passage)
RETURN p.id AS source, q.id AS target, s.score AS score
