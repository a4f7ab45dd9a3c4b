// The k-NN linker's floor budget as the last long sync tuned it (weak edges per new passage):
// a sync of many documents starts from it instead of the default.
MATCH (m:Meta {id: 'kgp'})
RETURN m.knn_budget AS budget
