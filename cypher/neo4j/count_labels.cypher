MATCH (n)
UNWIND labels(n) AS name
RETURN name, count(*) AS count
