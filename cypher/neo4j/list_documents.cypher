MATCH (d:Document)
RETURN d.id AS id, d.path AS path, d.sha256 AS sha256
ORDER BY id
