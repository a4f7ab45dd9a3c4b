MATCH ()-[r]->()
RETURN type(r) AS name, count(r) AS count
