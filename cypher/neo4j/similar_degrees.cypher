// weakest_links for a graph that holds no NEEDS_KNN flag (so none is read): for passages by id,
// how many SIMILAR out-edges they have and the score of the weakest.
UNWIND $ids AS id
MATCH (p:Passage {id: id})
OPTIONAL MATCH (p)-[s:SIMILAR]->()
RETURN id, count(s) AS degree, min(s.score) AS weakest
