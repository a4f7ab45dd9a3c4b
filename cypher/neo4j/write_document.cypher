// Replace one document's whole subgraph (run in one transaction). Passages of other documents
// that lose SIMILAR neighbours get a NEEDS_KNN self-relationship (the sync refills them); the
// new Document is pending until the sync has updated older passages' neighbours.
// Old nodes go first, then the document, its pages, tables and passages (of prose, contained by
// their page; of a table's rows, by their table), their NEXT,
// HAS_KEYWORD and SIMILAR relationships; last, the df of every keyword touched is recounted and
// keywords no passage uses any more are deleted.
OPTIONAL MATCH (:Passage {doc_id: $doc.id})-[:HAS_KEYWORD]->(old:Keyword)
WITH collect(DISTINCT old.term) AS old_terms
CALL () {
  MATCH (p:Passage)-[:SIMILAR]->(:Passage {doc_id: $doc.id})
  WHERE p.doc_id <> $doc.id
  MERGE (p)-[:NEEDS_KNN]->(p)
}
CALL () { MATCH (x:Passage {doc_id: $doc.id}) DETACH DELETE x }
CALL () { MATCH (x:Table {doc_id: $doc.id}) DETACH DELETE x }
CALL () { MATCH (x:Page {doc_id: $doc.id}) DETACH DELETE x }
CALL () { MATCH (x:Document {id: $doc.id}) DETACH DELETE x }
CREATE (d:Document)
SET d += $doc
WITH d, old_terms
CALL (d) {
  UNWIND $pages AS r
  CREATE (d)-[:HAS_PAGE]->(p:Page)
  SET p += r
}
CALL () {
  UNWIND $tables AS r
  MATCH (pg:Page {id: r.page_id})
  CREATE (pg)-[:CONTAINS]->(t:Table)
  SET t += r.props
}
CALL (d) {
  UNWIND $passages AS r
  MATCH (pg:Page {id: r.page_id})
  CREATE (d)-[:HAS_PASSAGE]->(p:Passage), (pg)-[:CONTAINS]->(p)
  SET p += r.props
  WITH p, r
  CALL db.create.setNodeVectorProperty(p, 'embedding', r.embedding)
}
CALL (d) {
  UNWIND $table_passages AS r
  MATCH (t:Table {id: r.table_id})
  CREATE (d)-[:HAS_PASSAGE]->(p:Passage), (t)-[:CONTAINS]->(p)
  SET p += r.props
  WITH p, r
  CALL db.create.setNodeVectorProperty(p, 'embedding', r.embedding)
}
CALL () {
  UNWIND $next AS r
  MATCH (a:Passage {id: r.source})
  MATCH (b:Passage {id: r.target})
  CREATE (a)-[:NEXT]->(b)
}
CALL () {
  UNWIND $keywords AS r
  MATCH (p:Passage {id: r.passage})
  MERGE (k:Keyword {term: r.term})
  CREATE (p)-[:HAS_KEYWORD]->(k)
}
CALL () {
  UNWIND $similar AS r
  MATCH (a:Passage {id: r.source})
  MATCH (b:Passage {id: r.target})
  CREATE (a)-[:SIMILAR {score: r.score, method: r.method}]->(b)
}
CALL (old_terms) {
  UNWIND old_terms + $terms AS term
  WITH DISTINCT term
  MATCH (k:Keyword {term: term})
  WITH k, COUNT { (k)<-[:HAS_KEYWORD]-(:Passage) } AS df
  SET k.df = df
  WITH k, df
  WHERE df = 0
  DELETE k
}
RETURN d.id AS id
