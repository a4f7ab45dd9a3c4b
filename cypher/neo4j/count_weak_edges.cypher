// How many SIMILAR edges score at most $t, counting no further than $cap.
MATCH ()-[s:SIMILAR]->()
WHERE s.score <= $t
WITH s
LIMIT $cap
RETURN count(s) AS n
