// The passages and tables of pages by number (every document the caller may read that has such
// a page), in reading order: what a structural question ("summarise page 5") asks for.
UNWIND $numbers AS number
MATCH (g:Page)
WHERE g.number = number
OPTIONAL MATCH (d:Document {id: g.doc_id})
WITH g, d
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
OPTIONAL MATCH (g)-[:CONTAINS]->(x)
WITH g, x
ORDER BY g.doc_id, g.number, x.ordinal, x.index
WITH g, collect(x) AS items
RETURN g.doc_id AS doc_id, g.number AS number,
       [x IN items WHERE labels(x)[0] = 'Passage' | {id: x.id, text: x.text}] AS passages,
       [x IN items WHERE labels(x)[0] = 'Table' | {id: x.id, markdown: x.markdown}] AS tables
ORDER BY doc_id, number
