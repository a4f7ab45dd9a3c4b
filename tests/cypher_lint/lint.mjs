// Lint Cypher files with Neo4j's analyzer (@neo4j-cypher/language-support, lintCypherQuery).
// The schema holds Neo4j's procedures and functions (testData.mockSchema) but no labels,
// relationship types or property keys, so misspelled procedures are errors while kgp's own labels
// are not warned about. Notices about undefined parameters are ignored: kgp passes them at run time.
// Usage: node lint.mjs FILE...  Prints one JSON object {file: [diagnostics]}; exit 1 on any.
import { readFileSync } from "node:fs";
import { lintCypherQuery, testData } from "@neo4j-cypher/language-support";

const schema = { ...testData.mockSchema };
for (const key of ["labels", "relationshipTypes", "propertyKeys", "parameters"]) delete schema[key];

const report = {};
let failures = 0;
for (const file of process.argv.slice(2)) {
  const query = readFileSync(file, "utf8");
  const { diagnostics } = lintCypherQuery(query, schema);
  const kept = diagnostics
    .filter((d) => !/^Parameter \$\S+ is not defined\.?$/.test(d.message))
    .map((d) => ({
      severity: d.severity === 1 ? "error" : d.severity === 2 ? "warning" : String(d.severity),
      line: d.range.start.line + 1,
      column: d.range.start.character + 1,
      message: d.message,
    }));
  report[file] = kept;
  failures += kept.length;
}
console.log(JSON.stringify(report));
process.exit(failures ? 1 : 0);
