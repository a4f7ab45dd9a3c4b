// For passages by id: how many SIMILAR out-edges they have and the score of the weakest (the
// k-th nearest), and whether a NEEDS_KNN flag awaits a refill. (A pattern comprehension over the
// self-relationship read false in FalkorDB 4.16 once SIMILAR edges were aggregated: two
// OPTIONAL MATCHes instead.)
UNWIND $ids AS id
MATCH (p:Passage {id: id})
OPTIONAL MATCH (p)-[f:NEEDS_KNN]->()
WITH p, count(f) > 0 AS flagged
OPTIONAL MATCH (p)-[s:SIMILAR]->()
RETURN p.id AS id, count(s) AS degree, min(s.score) AS weakest, flagged
