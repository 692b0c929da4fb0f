#!/usr/bin/env bash
# Builds poslab as a static web page into target/web/: index.html, the JavaScript glue, the
# .wasm, and a README.md whose header makes the folder a Hugging Face static Space. Installs
# what it needs when missing: the wasm32 target, and the wasm-bindgen CLI of
# the version Cargo.lock pins (the two must match). Serve the folder with any static server:
#   python3 -m http.server -d target/web 8080
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi

version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$version" ]; then
  echo "web/build.sh: Cargo.lock names no wasm-bindgen version" >&2
  exit 1
fi
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$version" ]; then
  echo "Installing wasm-bindgen-cli $version (a few minutes, once)"
  cargo install --quiet wasm-bindgen-cli --version "$version"
fi

cargo build --locked -p poslab-web --profile web --target wasm32-unknown-unknown

out=target/web
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
# Without the function names (2.5 MB): a panic's message still reaches the console.
wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$out.tmp" \
  target/wasm32-unknown-unknown/web/poslab_web.wasm
cp web/index.html web/worker.js "$out.tmp/"
# The folder is also a Hugging Face static Space as it is: its README's header says so.
cp web/space.md "$out.tmp/README.md"
rm -rf "$out"
mv "$out.tmp" "$out"

wasm="$out/poslab_web_bg.wasm"
echo "Built $out: $(du -h "$wasm" | cut -f1) of .wasm, $(gzip -9 -c "$wasm" | wc -c | awk '{printf "%.1f MB", $1 / 1048576}') gzipped"
echo "Serve it with: python3 -m http.server -d $out 8080   (then open http://localhost:8080)"
