// Every document the caller may read: id, path, content hash, title, page count and access
// groups (of those, only the caller's own; the admin sees all).
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
RETURN d.id AS id, d.path AS path, d.sha256 AS sha256, d.title AS title, d.pages AS pages,
       [g IN coalesce(d.groups, []) WHERE $caller_admin OR g IN $caller_groups] AS groups
ORDER BY id
