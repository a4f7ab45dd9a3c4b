// Replace documents' whole subgraphs in one query (FalkorDB's unit of atomicity): a sync writes
// many small documents per query, and every document is whole or absent whatever happens.
// Every row carries its document's id (ids are document-prefixed), so the documents' rows are
// flattened into one UNWIND per kind.
// Passages of other documents that lose SIMILAR neighbours get a NEEDS_KNN self-relationship
// (the sync refills them).
// New Documents are pending until the sync has updated older passages' neighbours.
// Old nodes go first, then the documents, their pages, tables and passages (of prose, contained
// by their page; of a table's rows, by their table), their NEXT,
// HAS_KEYWORD and SIMILAR relationships; last, each keyword's df loses the old passages that
// used it and gains the new ones ($term_counts), and keywords no passage uses any more are
// deleted. (Counted from the parameters and the old passages, not recounted from the graph: a
// recount walks every passage of a common keyword, which grows with the graph. A SET followed
// by a filtered DELETE in one subquery loses the SET in FalkorDB, hence separate subqueries.)
// Every lookup starts from an index on a row's id (tests/test_query_plans.py): a MATCH on a
// label alone would scan every node of it, O(graph) per write.
// First, the documents' group sets join the graph's record of those in use
// (access_coverage.cypher), in the same query, so no caller is ever told it reads every
// document while one it may not read exists (even in what a failed write leaves in memory until the server reloads).
UNWIND $doc_ids AS doc_id
OPTIONAL MATCH (:Passage {doc_id: doc_id})-[:HAS_KEYWORD]->(old:Keyword)
WITH old.term AS term, count(old) AS n
WITH [c IN collect({term: term, n: n}) WHERE c.term IS NOT NULL] AS old_counts
// The new passages' vector keys: the graph's counter plus each one's slot (kgp.stores.falkordb.vectors),
// from 1: a range index FalkorDB 4.16 loaded from its snapshot did not find the value 0
MERGE (m:Meta {id: 'kgp'})
WITH old_counts, m, coalesce(m.next_vkey, 1) AS base
SET m.next_vkey = base + size($passages) + size($table_passages)
WITH old_counts, base
// the keys of the passages the documents replace, which the index beside the graph drops
CALL {
  UNWIND $doc_ids AS doc_id
  MATCH (x:Passage {doc_id: doc_id})
  RETURN collect(x.vkey) AS replaced_keys
}
CALL {
  UNWIND $docs AS r
  WITH collect(DISTINCT reduce(s = '', g IN coalesce(r.groups, []) | s + ',' + g)) AS sets
  MATCH (m:Meta {id: 'kgp'})
  WHERE m.access_sets IS NOT NULL
  WITH m, [s IN sets WHERE NOT s IN m.access_sets] AS new
  WHERE size(new) > 0
  SET m.access_sets = m.access_sets + new, m.access_version = m.access_version + 1
}
CALL {
  UNWIND $doc_ids AS doc_id
  MATCH (x:Passage {doc_id: doc_id})
  WITH x
  MATCH (p:Passage)-[:SIMILAR]->(x)
  WHERE NOT p.doc_id IN $doc_ids
  MERGE (p)-[:NEEDS_KNN {flag: true}]->(p)
}
CALL { UNWIND $doc_ids AS doc_id MATCH (x:Passage {doc_id: doc_id}) DETACH DELETE x }
CALL { UNWIND $doc_ids AS doc_id MATCH (x:Table {doc_id: doc_id}) DETACH DELETE x }
CALL { UNWIND $doc_ids AS doc_id MATCH (x:Page {doc_id: doc_id}) DETACH DELETE x }
CALL { UNWIND $doc_ids AS doc_id MATCH (x:Document {id: doc_id}) DETACH DELETE x }
CALL {
  UNWIND $docs AS r
  CREATE (d:Document)
  SET d += r
}
CALL {
  UNWIND $pages AS r
  MATCH (d:Document {id: r.doc_id})
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
  WITH base
  UNWIND $passages AS r
  MATCH (d:Document {id: r.doc_id})
  MATCH (pg:Page {id: r.page_id})
  CREATE (d)-[:HAS_PASSAGE]->(p:Passage), (pg)-[:CONTAINS]->(p)
  SET p += r.props, p.embedding = vecf32(r.embedding), p.vkey = base + r.slot
}
CALL {
  WITH base
  UNWIND $table_passages AS r
  MATCH (d:Document {id: r.doc_id})
  MATCH (t:Table {id: r.table_id})
  CREATE (d)-[:HAS_PASSAGE]->(p:Passage), (t)-[:CONTAINS]->(p)
  SET p += r.props, p.embedding = vecf32(r.embedding), p.vkey = base + r.slot
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
RETURN size($docs) AS written, base AS first_key, replaced_keys
