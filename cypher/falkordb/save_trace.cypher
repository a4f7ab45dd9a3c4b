// A question's retrieval kept in the graph for Neo4j Browser: (:Trace)-[:RETRIEVED]->(passage or
// table) for every result, and (:Passage)-[:STEP {trace}]->(:Passage) for every step of the
// reasoning paths that reached them. One query, so a trace is whole or absent.
CREATE (t:Trace)
SET t += $trace
WITH t
CALL {
  WITH t
  UNWIND $items AS r
  MATCH (p:Passage {id: r.id})
  CREATE (t)-[:RETRIEVED {rank: r.rank, hop: r.hop, score: r.score}]->(p)
}
CALL {
  WITH t
  UNWIND $tables AS r
  MATCH (x:Table {id: r.id})
  CREATE (t)-[:RETRIEVED {rank: r.rank, hop: r.hop, score: r.score}]->(x)
}
CALL {
  UNWIND $steps AS r
  MATCH (a:Passage {id: r.source})
  MATCH (b:Passage {id: r.target})
  CREATE (a)-[:STEP {trace: $trace.id, hop: r.hop}]->(b)
}
RETURN t.id AS id
