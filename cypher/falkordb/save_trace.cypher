// A question's retrieval kept in the graph for Neo4j Browser: (:Trace)-[:RETRIEVED]->(passage or
// table) for every result, and (:Passage)-[:STEP {trace}]->(:Passage) for every step of the
// reasoning paths that reached them. One query, so a trace is whole or absent. The trace
// carries its caller's groups ($trace.groups); it links only to what the caller may read.
CREATE (t:Trace)
SET t += $trace
WITH t
CALL {
  WITH t
  UNWIND $items AS r
  MATCH (p:Passage {id: r.id})
  OPTIONAL MATCH (d:Document {id: p.doc_id})
  WITH t, r, p, d
  WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
  CREATE (t)-[:RETRIEVED {rank: r.rank, hop: r.hop, score: r.score}]->(p)
}
CALL {
  WITH t
  UNWIND $tables AS r
  MATCH (x:Table {id: r.id})
  OPTIONAL MATCH (d:Document {id: x.doc_id})
  WITH t, r, x, d
  WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
  CREATE (t)-[:RETRIEVED {rank: r.rank, hop: r.hop, score: r.score}]->(x)
}
CALL {
  UNWIND $steps AS r
  MATCH (a:Passage {id: r.source})
  MATCH (b:Passage {id: r.target})
  OPTIONAL MATCH (da:Document {id: a.doc_id})
  OPTIONAL MATCH (db:Document {id: b.doc_id})
  WITH r, a, b, da, db
  WHERE $caller_admin
        OR (any(g IN coalesce(da.groups, []) WHERE g IN $caller_groups)
            AND any(g IN coalesce(db.groups, []) WHERE g IN $caller_groups))
  CREATE (a)-[:STEP {trace: $trace.id, hop: r.hop}]->(b)
}
RETURN t.id AS id
