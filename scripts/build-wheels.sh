#!/usr/bin/env bash
# Release build: the source distribution, and from a fresh unpack of it the
# wheel users install: manylinux2014 (glibc >= 2.17) x86_64, abi3 (CPython
# >= 3.10), linked by zig so that no container is needed. Only PyPI and
# crates.io are used.
#
#   scripts/build-wheels.sh [OUT_DIR]      (default: dist/)
#
# Prints the wheel's platform tags (auditwheel) and its contents. The
# compiled dependencies are shared with the development build through
# CARGO_TARGET_DIR (default: this checkout's target/).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)"
cd "$root"

python3 -m pip install -q "maturin>=1.9.4,<2" "ziglang>=0.13" "auditwheel>=6"
rm -f "$out"/dpbandits-*.tar.gz "$out"/dpbandits-*.whl

maturin sdist --out "$out"
sdist="$(ls "$out"/dpbandits-*.tar.gz)"

unpack="$(mktemp -d)"
trap 'rm -rf "$unpack"' EXIT
tar -xzf "$sdist" -C "$unpack"
(
    cd "$unpack"/dpbandits-*/
    # The archive's file times can predate an earlier build's in the shared
    # target directory, which cargo would then take as up to date: the
    # wheel is always compiled from the unpacked sources.
    find . -type f -exec touch {} +
    CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" \
        maturin build --release --zig --compatibility manylinux2014 \
        --target x86_64-unknown-linux-gnu --out "$out"
)

wheel="$(ls "$out"/dpbandits-*.whl)"
auditwheel show "$wheel"
python3 - "$wheel" "$sdist" <<'PY'
import os
import sys
import zipfile

wheel, sdist = sys.argv[1:]
with zipfile.ZipFile(wheel) as zf:
    for info in zf.infolist():
        print(f"{info.file_size:>10}  {info.filename}")
for path in (wheel, sdist):
    print(f"{os.path.getsize(path) / 1e6:8.2f} MB  {os.path.basename(path)}")
PY
