// Who may read a document: its access groups, on the Document node alone (its pages, tables
// and passages inherit them).
MATCH (d:Document {id: $id})
SET d.groups = $groups
