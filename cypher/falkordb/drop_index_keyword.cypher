// Set aside with the vector index when the server stops (FalkorStore): only writes look keywords
// up by term, and a start loads the graph faster without it; the next write builds it again.
DROP INDEX FOR (n:Keyword) ON (n.term)
