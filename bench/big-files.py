#!/usr/bin/env python3
"""A workspace of N capture files of about MB megabytes each (one capture record per `.json`
file, its `output` a JSON object with one array of short strings), for `check -q`'s peak
memory against `max_capture_bytes` x workers (docs/verdicts.md#limits, bench/big-files.sh).

Usage: python3 bench/big-files.py DIR [N=100] [MB=10]
"""
import json
import os
import sys

root = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
mb = int(sys.argv[3]) if len(sys.argv) > 3 else 10
os.makedirs(os.path.join(root, "schemas"), exist_ok=True)
os.makedirs(os.path.join(root, "captures"), exist_ok=True)
with open(os.path.join(root, "schemas", "c.schema.json"), "w") as f:
    json.dump({"type": "object", "required": ["items"],
               "properties": {"items": {"type": "array", "items": {"type": "string"}}}}, f)
# each item `"xxxxxxxxxxxxxx",` is 17 bytes of output text, about 20 once escaped in the record
items = (mb * 1_000_000) // 20
output = json.dumps({"items": ["x" * 14] * items})
for i in range(n):
    with open(os.path.join(root, "captures", f"c{i:03}.json"), "w") as f:
        json.dump({"id": f"c{i}", "output": output}, f)
