// Replace the SIMILAR out-edges of many passages (exact k nearest, computed by the linker),
// clear their NEEDS_KNN flags, and mark documents whose neighbours are now linked ($done) as
// no longer pending. One transaction.
CALL () {
  UNWIND $rows AS r
  MATCH (:Passage {id: r.source})-[s:SIMILAR]->()
  DELETE s
}
CALL () {
  UNWIND $rows AS r
  UNWIND r.targets AS t
  MATCH (p:Passage {id: r.source})
  MATCH (q:Passage {id: t.id})
  CREATE (p)-[:SIMILAR {score: t.score, method: t.method}]->(q)
}
CALL () {
  UNWIND $rows AS r
  MATCH (:Passage {id: r.source})-[f:NEEDS_KNN]->()
  DELETE f
}
CALL () {
  UNWIND $done AS id
  MATCH (d:Document {id: id})
  SET d.pending = null
}
RETURN size($rows) AS replaced
