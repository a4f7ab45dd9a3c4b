// Documents per access group (a document counts once in each of its groups).
MATCH (d:Document)
UNWIND d.groups AS name
RETURN name, count(*) AS count
