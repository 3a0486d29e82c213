#!/usr/bin/env bash
# Regenerates the generated parts of docs/ (the instruction tables of docs/isa.md) from the
# instruction table, using a built hologram-info (default build/). A unit test fails while
# docs/isa.md differs from what this writes.
set -euo pipefail
cd "$(dirname "$0")/.."
info=${1:-build/tools/hologram-info/hologram-info}
python3 - "$info" <<'PY'
import subprocess, sys
tables = subprocess.run([sys.argv[1], "--isa-reference"], check=True, capture_output=True,
                        text=True).stdout
path = "docs/isa.md"
doc = open(path).read()
begin = doc.index("<!-- BEGIN GENERATED: hologram-info --isa-reference")
body = doc.index("-->\n\n", begin) + 5
end = doc.index("\n<!-- END GENERATED -->", body)
open(path, "w").write(doc[:body] + tables + doc[end:])
PY
