// Documents written by a sync that stopped before it linked older passages to them.
MATCH (d:Document)
WHERE d.pending = true
RETURN d.id AS id
ORDER BY id
