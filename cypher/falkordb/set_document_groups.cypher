// Who may read documents: their access groups, on the Document nodes alone (their pages,
// tables and passages inherit them). One row per document. The new sets join the graph's
// record of the sets in use, in the same query (see write_documents.cypher).
UNWIND $rows AS r
MATCH (d:Document {id: r.id})
SET d.groups = r.groups
WITH count(d) AS changed
CALL {
  UNWIND $rows AS r
  WITH collect(DISTINCT reduce(s = '', g IN coalesce(r.groups, []) | s + ',' + g)) AS sets
  MATCH (m:Meta {id: 'kgp'})
  WHERE m.access_sets IS NOT NULL
  WITH m, [s IN sets WHERE NOT s IN m.access_sets] AS new
  WHERE size(new) > 0
  SET m.access_sets = m.access_sets + new, m.access_version = m.access_version + 1
}
RETURN changed
