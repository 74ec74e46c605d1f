// Prints the problems of a `redocly lint --format=json` report and fails on
// any error or warning (Redocly itself fails on errors only).
const report = require(require('path').resolve(process.argv[2]));
for (const p of report.problems) {
  console.log(`${p.severity} ${p.ruleId} ${p.location[0].pointer}: ${p.message}`);
}
const t = report.totals;
console.log(`redocly: ${t.errors} errors, ${t.warnings} warnings`);
process.exit(t.errors + t.warnings ? 1 : 0);
