// How many passages (table rows included) and tables each of some documents has, for documents
// the caller may read: what a document list shows beside each name.
UNWIND $doc_ids AS wanted
MATCH (d:Document {id: wanted})
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
OPTIONAL MATCH (d)-[:HAS_PASSAGE]->(p:Passage)
WITH d, count(p) AS passages
OPTIONAL MATCH (t:Table {doc_id: d.id})
RETURN d.id AS id, passages, count(t) AS tables
