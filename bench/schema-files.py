#!/usr/bin/env python3
"""Many schema files: `schema-files.py OUT KIND N` writes a workspace into OUT with N schema
files and 50 captures spread over them (one JSONL log), for timing `verdict check` on them
(bench/schema-files.sh). KIND `chain`: each file `$ref`s the next (`s00000.json` ->
`s00001.json` -> ... -> the last, `{"type": "string"}`); `flat`: N independent small
object schemas. Deterministic: the same arguments give the same bytes."""
import json
import os
import sys


def main():
    out, kind, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(os.path.join(out, "schemas"), exist_ok=True)
    os.makedirs(os.path.join(out, "captures"), exist_ok=True)
    with open(os.path.join(out, "verdict.toml"), "w") as f:
        f.write("format_assertion = false\n")
    for i in range(n):
        if kind == "chain":
            s = {"$ref": f"s{i + 1:05}.json"} if i + 1 < n else {"type": "string"}
        else:
            s = {
                "type": "object",
                "properties": {"id": {"type": "string"}, "v": {"type": "integer"}},
                "required": ["v"],
            }
        with open(os.path.join(out, "schemas", f"s{i:05}.json"), "w") as f:
            json.dump(s, f)
    with open(os.path.join(out, "captures", "c.jsonl"), "w") as f:
        for i in range(0, n, max(1, n // 50)):
            output = json.dumps("x" if kind == "chain" else {"v": i})
            f.write(json.dumps({"id": f"c{i}", "contract": f"s{i:05}", "output": output}) + "\n")


if __name__ == "__main__":
    main()
