// Replace the SIMILAR out-edges of many passages and clear their needs_knn flag.
CALL {
  UNWIND $rows AS r
  MATCH (p:Passage {id: r.source})-[s:SIMILAR]->()
  DELETE s
}
CALL {
  UNWIND $rows AS r
  UNWIND r.targets AS t
  MATCH (p:Passage {id: r.source})
  MATCH (q:Passage {id: t.id})
  CREATE (p)-[:SIMILAR {score: t.score, method: t.method}]->(q)
}
CALL {
  UNWIND $rows AS r
  MATCH (p:Passage {id: r.source})
  SET p.needs_knn = NULL
}
RETURN size($rows) AS replaced
