// Validates Kubernetes objects against the Kubernetes v1.36.0 API schema, as compiled into ajv
// validators by the npm package `kubernetes-models` 5.1.0 (its scripts/generate.ts reads the
// OpenAPI definitions of Kubernetes 1.36.0, with the enums the upstream spec dropped after 1.24
// put back). Usage: node validate-kube.mjs NODE_MODULES_DIR FILE...
// A FILE holds one object or a `{"kind":"List","items":[...]}`. Every object must name an
// apiVersion and kind the package has a model for; its model's validate() must pass. Exit 0 when
// every object validates, 1 when one does not (errors on stderr), 2 on bad usage.
// What this cannot see: a field name the schema does not declare (the Kubernetes schema allows
// unknown fields; the API server drops them, or refuses them under --validate=strict). The
// controller's own tests compare every object with its golden file, and docs/places.md has the
// first live run apply them with --dry-run=server --validate=strict.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

if (process.argv.length < 4) {
  console.error('usage: node validate-kube.mjs NODE_MODULES_DIR FILE...');
  process.exit(2);
}
const modules = path.resolve(process.argv[2]);
const pkg = JSON.parse(fs.readFileSync(path.join(modules, 'kubernetes-models', 'package.json'), 'utf8'));
if (pkg.version !== '5.1.0') {
  console.error(`kubernetes-models ${pkg.version}: expected 5.1.0 (the Kubernetes v1.36.0 schema)`);
  process.exit(2);
}

async function modelFor(apiVersion, kind) {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !/^[A-Za-z]+$/.test(kind)) return null;
  const parts = apiVersion.split('/');
  if (parts.length > 2 || parts.some((p) => !/^[a-z0-9.]+$/.test(p))) return null;
  const file = path.join(modules, 'kubernetes-models', ...parts, `${kind}.js`);
  if (!fs.existsSync(file)) return null;
  const mod = await import(pathToFileURL(file).href);
  const Model = mod[kind];
  if (!Model || Model.apiVersion !== apiVersion || Model.kind !== kind) return null;
  return Model;
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
  const objects = doc && doc.kind === 'List' && Array.isArray(doc.items) ? doc.items : [doc];
  for (const [i, obj] of objects.entries()) {
    const where = `${file}[${i}] ${obj && obj.kind}/${obj && obj.metadata && obj.metadata.name}`;
    const Model = await modelFor(obj && obj.apiVersion, obj && obj.kind);
    if (!Model) {
      console.error(`${where}: no Kubernetes v1.36.0 model for apiVersion ${obj && obj.apiVersion}, kind ${obj && obj.kind}`);
      bad++;
      continue;
    }
    try {
      new Model(obj).validate();
      console.log(`${where}: valid against Kubernetes v1.36.0 ${obj.apiVersion} ${obj.kind}`);
    } catch (e) {
      console.error(`${where}: ${e.message}`);
      bad++;
    }
  }
}
process.exit(bad === 0 ? 0 : 1);
