// similar_degrees for passages that may gain a new neighbour (admin: every document; a graph
// holding no NEEDS_KNN flag): each id with $best at the same place, the highest similarity of
// the passage to a new passage, and only those are returned whose list that can enter: fewer
// than $k out-edges, or $best within $margin of the weakest.
UNWIND range(0, size($ids) - 1) AS n
WITH $ids[n] AS id, $best[n] AS best
MATCH (p:Passage {id: id})
OPTIONAL MATCH (p)-[s:SIMILAR]->()
WITH id, best, count(s) AS degree, min(s.score) AS weakest
WHERE degree < $k OR best >= weakest - $margin
RETURN id, degree, weakest
