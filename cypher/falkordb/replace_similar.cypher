// Replace the SIMILAR out-edges of many passages; their needs_knn flag stays only where fewer
// than k neighbours were found (r.full is false).
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
  SET p.needs_knn = CASE WHEN r.full THEN NULL ELSE true END
}
RETURN size($rows) AS replaced
