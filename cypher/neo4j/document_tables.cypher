// Every table with its place, in document order (page, then position on the page): "Table 3"
// of a document is its third.
MATCH (t:Table)
RETURN t.id AS id, t.doc_id AS doc_id, t.page AS page, t.index AS index, t.markdown AS markdown
ORDER BY doc_id, page, index
