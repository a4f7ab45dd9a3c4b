// Documents per access group (a document counts once in each of its groups): the documents the
// caller may read, in the caller's own groups (the admin: every document and group).
MATCH (d:Document)
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
UNWIND [g IN coalesce(d.groups, []) WHERE $caller_admin OR g IN $caller_groups] AS name
RETURN name, count(*) AS count
