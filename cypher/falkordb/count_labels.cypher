MATCH (n)
RETURN labels(n)[0] AS name, count(n) AS count
