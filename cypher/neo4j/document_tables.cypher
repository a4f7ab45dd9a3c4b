// Every table the caller may read, with its place and caption, in document order (page, then
// position on the page): "Table 3" of a document is the one captioned "Table 3", else its third.
MATCH (t:Table)
OPTIONAL MATCH (d:Document {id: t.doc_id})
WITH t, d
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
RETURN t.id AS id, t.doc_id AS doc_id, t.page AS page, t.index AS index, t.markdown AS markdown,
       t.caption AS caption
ORDER BY doc_id, page, index
