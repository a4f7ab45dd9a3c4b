// How many passages are flagged for new SIMILAR neighbours (NEEDS_KNN): read from the store's
// count of relationships by type, without visiting any node (the check every sync ends with).
MATCH ()-[f:NEEDS_KNN]->()
RETURN count(f) AS n
