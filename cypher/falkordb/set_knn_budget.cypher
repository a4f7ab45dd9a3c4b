// Keep the k-NN linker's tuned floor budget for the next long sync (tuning state, not content:
// dumps leave it out).
MERGE (m:Meta {id: 'kgp'})
SET m.knn_budget = $budget
RETURN m.knn_budget AS budget
