// Delete one document, its pages, tables and passages, and the keywords no one else uses;
// passages that lose SIMILAR neighbours get NEEDS_KNN.
OPTIONAL MATCH (:Passage {doc_id: $id})-[:HAS_KEYWORD]->(old:Keyword)
WITH collect(DISTINCT old.term) AS old_terms
OPTIONAL MATCH (d:Document {id: $id})
WITH old_terms, count(d) AS found
CALL () {
  MATCH (p:Passage)-[:SIMILAR]->(:Passage {doc_id: $id})
  WHERE p.doc_id <> $id
  MERGE (p)-[:NEEDS_KNN {flag: true}]->(p)
}
CALL () { MATCH (x:Passage {doc_id: $id}) DETACH DELETE x }
CALL () { MATCH (x:Table {doc_id: $id}) DETACH DELETE x }
CALL () { MATCH (x:Page {doc_id: $id}) DETACH DELETE x }
CALL () { MATCH (x:Document {id: $id}) DETACH DELETE x }
CALL (old_terms) {
  UNWIND old_terms AS term
  MATCH (k:Keyword {term: term})
  WITH k, COUNT { (k)<-[:HAS_KEYWORD]-(:Passage) } AS df
  SET k.df = df
  WITH k, df
  WHERE df = 0
  DELETE k
}
RETURN found
