// Replace one document's whole subgraph in one query (FalkorDB's unit of atomicity).
// Passages of other documents that lose SIMILAR neighbours get a NEEDS_KNN self-relationship
// (the sync refills them); a flag is never a property, because FalkorDB 4.16 leaves an orphan
// vector in the index for every write to a vector-indexed node (deleted passages leave orphans
// too: the store searches past them and rebuilds the index when they pile up).
// The new Document is pending until the sync has updated older passages' neighbours.
// Old nodes go first, then the document, its pages, tables and passages (of prose, contained by
// their page; of a table's rows, by their table), their NEXT,
// HAS_KEYWORD and SIMILAR relationships; last, each keyword's df loses the old passages that
// used it and gains the new ones ($term_counts), and keywords no passage uses any more are
// deleted. (Counted from the parameters and the old passages, not recounted from the graph: a
// recount walks every passage of a common keyword, which grows with the graph. A SET followed
// by a filtered DELETE in one subquery loses the SET in FalkorDB, hence separate subqueries.)
OPTIONAL MATCH (:Passage {doc_id: $doc.id})-[:HAS_KEYWORD]->(old:Keyword)
WITH old.term AS term, count(old) AS n
WITH [c IN collect({term: term, n: n}) WHERE c.term IS NOT NULL] AS old_counts
CALL {
  MATCH (x:Passage {doc_id: $doc.id})
  WITH x  // from the document's passages: without it FalkorDB scans every passage (O(graph))
  MATCH (p:Passage)-[:SIMILAR]->(x)
  WHERE p.doc_id <> $doc.id
  MERGE (p)-[:NEEDS_KNN]->(p)
}
CALL { MATCH (x:Passage {doc_id: $doc.id}) DETACH DELETE x }
CALL { MATCH (x:Table {doc_id: $doc.id}) DETACH DELETE x }
CALL { MATCH (x:Page {doc_id: $doc.id}) DETACH DELETE x }
CALL { MATCH (x:Document {id: $doc.id}) DETACH DELETE x }
CREATE (d:Document)
SET d += $doc
WITH d, old_counts
CALL {
  WITH d
  UNWIND $pages AS r
  CREATE (d)-[:HAS_PAGE]->(p:Page)
  SET p += r
}
CALL {
  UNWIND $tables AS r
  MATCH (pg:Page {id: r.page_id})
  CREATE (pg)-[:CONTAINS]->(t:Table)
  SET t += r.props
}
CALL {
  WITH d
  UNWIND $passages AS r
  MATCH (pg:Page {id: r.page_id})
  CREATE (d)-[:HAS_PASSAGE]->(p:Passage), (pg)-[:CONTAINS]->(p)
  SET p += r.props, p.embedding = vecf32(r.embedding)
}
CALL {
  WITH d
  UNWIND $table_passages AS r
  MATCH (t:Table {id: r.table_id})
  CREATE (d)-[:HAS_PASSAGE]->(p:Passage), (t)-[:CONTAINS]->(p)
  SET p += r.props, p.embedding = vecf32(r.embedding)
}
CALL {
  UNWIND $next AS r
  MATCH (a:Passage {id: r.source})
  MATCH (b:Passage {id: r.target})
  CREATE (a)-[:NEXT]->(b)
}
CALL {
  UNWIND $keywords AS r
  MATCH (p:Passage {id: r.passage})
  MERGE (k:Keyword {term: r.term})
  CREATE (p)-[:HAS_KEYWORD]->(k)
}
CALL {
  UNWIND $similar AS r
  MATCH (a:Passage {id: r.source})
  MATCH (b:Passage {id: r.target})
  CREATE (a)-[:SIMILAR {score: r.score, method: r.method}]->(b)
}
CALL {
  WITH old_counts
  UNWIND old_counts AS c
  MATCH (k:Keyword {term: c.term})
  SET k.df = k.df - c.n
}
CALL {
  UNWIND $term_counts AS c
  MATCH (k:Keyword {term: c.term})
  SET k.df = coalesce(k.df, 0) + c.n
}
CALL {
  WITH old_counts
  UNWIND old_counts AS c
  MATCH (k:Keyword {term: c.term})
  WHERE k.df = 0
  DELETE k
}
RETURN d.id AS id
