// Who may read documents: their access groups, on the Document nodes alone (their pages,
// tables and passages inherit them). One row per document.
UNWIND $rows AS r
MATCH (d:Document {id: r.id})
SET d.groups = r.groups
