"""kgp.agents: seeders, the Algorithm 1 traversal, scorers, reader and GNN-Ret."""
