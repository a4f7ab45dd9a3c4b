// weakest_links for a graph that holds no NEEDS_KNN flag (so none is read): for passages by id,
// how many SIMILAR out-edges they have and the score of the weakest. The id returned is the one
// asked for, not read again from the node (12,000 passages of a 100k graph: 117 ms against 180
// for weakest_links, the flag's match being most of the difference).
UNWIND $ids AS id
MATCH (p:Passage {id: id})
OPTIONAL MATCH (p)-[s:SIMILAR]->()
RETURN id, count(s) AS degree, min(s.score) AS weakest
