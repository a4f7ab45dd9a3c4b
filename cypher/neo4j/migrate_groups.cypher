// Schema 3: documents written before access groups get the default groups.
MATCH (d:Document)
WHERE d.groups IS NULL
SET d.groups = $groups
