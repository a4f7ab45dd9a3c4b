// Replace documents' whole subgraphs (run in one transaction): a sync writes many small
// documents per query, each whole or absent. Every row carries its document's id (ids are
// document-prefixed), so the documents' rows are flattened into one UNWIND per kind. The write
// is idempotent (a replay replaces the same documents again), so the driver may retry it after
// a leader change.
// Passages of other documents that lose SIMILAR neighbours get a NEEDS_KNN self-relationship
// (the sync refills them); new Documents are pending until the sync has updated older
// passages' neighbours.
// Old nodes go first, then the documents, their pages, tables and passages (of prose, contained
// by their page; of a table's rows, by their table), their NEXT,
// HAS_KEYWORD and SIMILAR relationships; last, the df of every keyword touched is recounted and
// keywords no passage uses any more are deleted.
// First, the documents' group sets join the graph's record of those in use
// (access_coverage.cypher), in the same query, so no caller is ever told it reads every
// document while one it may not read exists.
OPTIONAL MATCH (x:Passage)-[:HAS_KEYWORD]->(old:Keyword)
WHERE x.doc_id IN $doc_ids
WITH collect(DISTINCT old.term) AS old_terms
CALL () {
  UNWIND $docs AS r
  WITH collect(DISTINCT reduce(s = '', g IN coalesce(r.groups, []) | s + ',' + g)) AS sets
  MATCH (m:Meta {id: 'kgp'})
  WHERE m.access_sets IS NOT NULL
  WITH m, [s IN sets WHERE NOT s IN m.access_sets] AS new
  WHERE size(new) > 0
  SET m.access_sets = m.access_sets + new, m.access_version = m.access_version + 1
}
CALL () {
  MATCH (p:Passage)-[:SIMILAR]->(x:Passage)
  WHERE x.doc_id IN $doc_ids AND NOT p.doc_id IN $doc_ids
  MERGE (p)-[:NEEDS_KNN {flag: true}]->(p)
}
CALL () { MATCH (x:Passage) WHERE x.doc_id IN $doc_ids DETACH DELETE x }
CALL () { MATCH (x:Table) WHERE x.doc_id IN $doc_ids DETACH DELETE x }
CALL () { MATCH (x:Page) WHERE x.doc_id IN $doc_ids DETACH DELETE x }
CALL () { MATCH (x:Document) WHERE x.id IN $doc_ids DETACH DELETE x }
CALL () {
  UNWIND $docs AS r
  CREATE (d:Document)
  SET d += r
}
CALL () {
  UNWIND $pages AS r
  MATCH (d:Document {id: r.doc_id})
  CREATE (d)-[:HAS_PAGE]->(p:Page)
  SET p += r
}
CALL () {
  UNWIND $tables AS r
  MATCH (pg:Page {id: r.page_id})
  CREATE (pg)-[:CONTAINS]->(t:Table)
  SET t += r.props
}
CALL () {
  UNWIND $passages AS r
  MATCH (d:Document {id: r.doc_id})
  MATCH (pg:Page {id: r.page_id})
  CREATE (d)-[:HAS_PASSAGE]->(p:Passage), (pg)-[:CONTAINS]->(p)
  SET p += r.props
  WITH p, r
  CALL db.create.setNodeVectorProperty(p, 'embedding', r.embedding)
}
CALL () {
  UNWIND $table_passages AS r
  MATCH (d:Document {id: r.doc_id})
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
RETURN size($docs) AS written
