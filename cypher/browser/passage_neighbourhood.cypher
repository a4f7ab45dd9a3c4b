// kgp: the neighbourhood N(v) the traversal expands for one passage: SIMILAR (either way),
// NEXT, and passages sharing a keyword used by at most 50 passages
// (set :param passage_id => "report.pdf#passage=3").
MATCH (p:Passage {id: $passage_id})
OPTIONAL MATCH similar = (p)-[:SIMILAR]-(:Passage)
OPTIONAL MATCH next = (p)-[:NEXT]-(:Passage)
OPTIONAL MATCH shared = (p)-[:HAS_KEYWORD]->(k:Keyword)<-[:HAS_KEYWORD]-(:Passage)
WHERE k.df <= 50
RETURN p, similar, next, shared
LIMIT 200
