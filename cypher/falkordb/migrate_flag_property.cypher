// Migration to schema 4: every NEEDS_KNN flag carries flag: true, which the flags' index holds
// (a refill then finds them without visiting every passage).
MATCH ()-[f:NEEDS_KNN]->()
WHERE f.flag IS NULL
SET f.flag = true
RETURN count(f) AS flagged
