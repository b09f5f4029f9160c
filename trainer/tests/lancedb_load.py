"""Opens a table written by `trainer store` with LanceDB's own Python library and prints what
it finds as one JSON line: the model fingerprint in the schema metadata, the row count, the
columns, the vector index, and for a few rows the ids a dot-product search of the row's own
vector returns first. Exits non-zero if LanceDB cannot open or search the table.

    python lancedb_load.py DB_FOLDER TABLE      # with lancedb importable
"""

import json
import sys

import lancedb
import numpy as np

db_folder, table_name = sys.argv[1], sys.argv[2]
table = lancedb.connect(db_folder).open_table(table_name)
schema = table.schema
ids = table.to_arrow()["id"].to_pylist()
vectors = table.to_arrow()["vector"]
probes = [0, len(ids) // 2, len(ids) - 1]
first = []
for row in probes:
    vector = np.array(vectors[row].as_py(), dtype=np.float32)
    hits = table.search(vector).metric("dot").nprobes(64).refine_factor(20).limit(1).to_arrow()
    first.append({"row": ids[row], "found": hits["id"].to_pylist()[0]})
print(json.dumps({
    "model": (schema.metadata or {}).get(b"ifir.model", b"").decode(),
    "rows": table.count_rows(),
    "columns": schema.names,
    "indices": [str(i.index_type) for i in table.list_indices()],
    "self_search": first,
}))
