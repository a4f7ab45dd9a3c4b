// Delete one document, its pages, tables and passages, and the keywords no one else uses (each
// keyword's df loses the document's passages that used it); passages that lose SIMILAR
// neighbours get NEEDS_KNN. Returns whether it was found and its passages' vector keys (which
// the index beside the graph drops).
OPTIONAL MATCH (:Passage {doc_id: $id})-[:HAS_KEYWORD]->(old:Keyword)
WITH old.term AS term, count(old) AS n
WITH [c IN collect({term: term, n: n}) WHERE c.term IS NOT NULL] AS old_counts
OPTIONAL MATCH (d:Document {id: $id})
WITH old_counts, count(d) AS found
CALL {
  MATCH (x:Passage {doc_id: $id})
  RETURN collect(x.vkey) AS keys
}
CALL {
  MATCH (x:Passage {doc_id: $id})
  WITH x  // from the document's passages: without it FalkorDB scans every passage (O(graph))
  MATCH (p:Passage)-[:SIMILAR]->(x)
  WHERE p.doc_id <> $id
  MERGE (p)-[:NEEDS_KNN {flag: true}]->(p)
}
CALL { MATCH (x:Passage {doc_id: $id}) DETACH DELETE x }
CALL { MATCH (x:Table {doc_id: $id}) DETACH DELETE x }
CALL { MATCH (x:Page {doc_id: $id}) DETACH DELETE x }
CALL { MATCH (x:Document {id: $id}) DETACH DELETE x }
CALL {
  WITH old_counts
  UNWIND old_counts AS c
  MATCH (k:Keyword {term: c.term})
  SET k.df = k.df - c.n
}
CALL {
  WITH old_counts
  UNWIND old_counts AS c
  MATCH (k:Keyword {term: c.term})
  WHERE k.df = 0
  DELETE k
}
RETURN found, keys
