// Record the group sets the documents hold now (Meta.access_sets, the names of each set joined
// by commas), counted from every Document, and a new access_version: at the graph's first sync,
// on the schema's upgrade and on `kgp maintain` (which drops the sets of removed documents;
// writes only add sets: write_documents, set_document_groups). Admin only. A new record's
// version starts from the clock, so one made after a clear never repeats an earlier one.
OPTIONAL MATCH (d:Document)
WITH collect(DISTINCT CASE WHEN d IS NULL THEN null
                          ELSE reduce(s = '', g IN coalesce(d.groups, []) | s + ',' + g) END) AS sets
MERGE (m:Meta {id: 'kgp'})
SET m.access_sets = sets, m.access_version = coalesce(m.access_version, timestamp()) + 1
RETURN size(sets) AS sets
