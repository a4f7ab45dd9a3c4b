// Every document: id, path, content hash, title, page count and access groups.
MATCH (d:Document)
RETURN d.id AS id, d.path AS path, d.sha256 AS sha256, d.title AS title, d.pages AS pages,
       d.groups AS groups
ORDER BY id
