// How many passages the graph holds, from the store's count of nodes by label (the k-NN linker's
// check that the vectors it keeps are every passage's, before each group it links by them).
MATCH (p:Passage)
RETURN count(p) AS n
