// Replace one document's whole subgraph in one query (FalkorDB's unit of atomicity).
// Passages of other documents that lose SIMILAR neighbours get a NEEDS_KNN self-relationship
// (the sync refills them); a flag is never a property, because FalkorDB 4.16 leaves an orphan
// vector in the index for every write to a vector-indexed node (deleted passages leave orphans
// too: the store searches past them and rebuilds the index when they pile up).
// The new Document is pending until the sync has updated older passages' neighbours.
// Old nodes go first, then the document, its pages, tables and passages (of prose, contained by
// their page; of a table's rows, by their table), their NEXT,
// HAS_KEYWORD and SIMILAR relationships; last, the df of every keyword touched is recounted and
// keywords no passage uses any more are deleted. (The count is a pattern comprehension:
// OPTIONAL MATCH + count() here does not see this query's own writes in FalkorDB, and a SET
// followed by a filtered DELETE in one subquery loses the SET, hence two subqueries.)
OPTIONAL MATCH (:Passage {doc_id: $doc.id})-[:HAS_KEYWORD]->(old:Keyword)
WITH collect(DISTINCT old.term) AS old_terms
CALL {
  MATCH (p:Passage)-[:SIMILAR]->(:Passage {doc_id: $doc.id})
  WHERE p.doc_id <> $doc.id
  MERGE (p)-[:NEEDS_KNN]->(p)
}
CALL { MATCH (x:Passage {doc_id: $doc.id}) DETACH DELETE x }
CALL { MATCH (x:Table {doc_id: $doc.id}) DETACH DELETE x }
CALL { MATCH (x:Page {doc_id: $doc.id}) DETACH DELETE x }
CALL { MATCH (x:Document {id: $doc.id}) DETACH DELETE x }
CREATE (d:Document)
SET d += $doc
WITH d, old_terms
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
  WITH old_terms
  UNWIND old_terms + $terms AS term
  MATCH (k:Keyword {term: term})
  WITH k, size([(k)<-[:HAS_KEYWORD]-(p:Passage) | p]) AS df
  SET k.df = df
}
CALL {
  WITH old_terms
  UNWIND old_terms AS term
  MATCH (k:Keyword {term: term})
  WHERE k.df = 0
  DELETE k
}
RETURN d.id AS id
