"""Standalone JSON schemas from the kubernetes-validate wheel, for kubeconform (vendor-schemas.sh).

usage: standalone-schemas.py WHEEL KUBERNETES_VERSION OUT_DIR KIND...

Each KIND (e.g. deployment-apps-v1) is read from v<version>-local-strict/ in the wheel; the
definitions it reaches through "$ref" are copied from _definitions.json into its own "$defs" and
the references rewritten to "#/$defs/<name>". Nothing else changes. "$id" is dropped: it names a
https URL that kubeconform would try to resolve other references against.
"""
import json
import sys
import zipfile

wheel, version, out_dir, kinds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
archive = zipfile.ZipFile(wheel)
prefix = f'kubernetes_validate/kubernetes-json-schema/v{version}-local-strict/'
definitions = json.loads(archive.read(prefix + '_definitions.json'))['$defs']
REFERENCES = ('/api/_definitions.json#/$defs/', '#/$defs/')


def inline(node, reached):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == '$ref' and isinstance(value, str):
                name = next((value[len(p):] for p in REFERENCES if value.startswith(p)), None)
                if name is None:
                    raise SystemExit(f'unexpected reference {value}')
                node[key] = '#/$defs/' + name
                if name not in reached:
                    reached[name] = json.loads(json.dumps(definitions[name]))
                    inline(reached[name], reached)
            else:
                inline(value, reached)
    elif isinstance(node, list):
        for value in node:
            inline(value, reached)


for kind in kinds:
    schema = json.loads(archive.read(prefix + kind + '.json'))
    reached = {}
    inline(schema, reached)
    schema.pop('$id', None)
    schema['$defs'] = {name: reached[name] for name in sorted(reached)}
    with open(f'{out_dir}/{kind}.json', 'w') as out:
        out.write(json.dumps(schema, indent=1, sort_keys=True) + '\n')
