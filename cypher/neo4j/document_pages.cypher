// One document's pages in order, each with its passages of prose (a table's rows are its table's)
// and its tables, in reading order: the document view. Nothing when the caller may not read it.
MATCH (d:Document {id: $doc_id})
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
MATCH (g:Page {doc_id: $doc_id})
OPTIONAL MATCH (g)-[:CONTAINS]->(x)
WITH g, x
ORDER BY g.number, x.ordinal, x.index
WITH g, collect(x) AS items
RETURN g.doc_id AS doc_id, g.number AS number,
       [x IN items WHERE x:Passage AND x.table_id IS NULL
          | {id: x.id, text: x.text}] AS passages,
       [x IN items WHERE x:Table
          | {id: x.id, markdown: x.markdown, caption: coalesce(x.caption, '')}] AS tables
ORDER BY number
