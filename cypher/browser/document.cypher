// kgp: one document with its pages, tables and passages (set :param doc_id => "report.pdf").
MATCH (d:Document {id: $doc_id})-[:HAS_PAGE]->(g:Page)
OPTIONAL MATCH (g)-[c:CONTAINS]->(x)
RETURN d, g, c, x
LIMIT 300
