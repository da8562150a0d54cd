#!/usr/bin/env bash
# Generate share/man/man1/*.1 (a man page per subcommand) and share/completions/* (bash, zsh,
# fish, elvish, powershell) from the one clap definition, with `reanimator man` and
# `reanimator completions`. Usage: gen-cli-docs.sh [--check]  (--check: fail when the
# committed files differ from what the current source generates).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --locked -q -p reanimator
bin="${CARGO_TARGET_DIR:-target}/debug/reanimator"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/man/man1" "$out/completions"
"$bin" man "$out/man/man1"
"$bin" completions bash >"$out/completions/reanimator.bash"
"$bin" completions zsh >"$out/completions/_reanimator"
"$bin" completions fish >"$out/completions/reanimator.fish"
"$bin" completions elvish >"$out/completions/reanimator.elv"
"$bin" completions powershell >"$out/completions/_reanimator.ps1"
if [ "${1:-}" = --check ]; then
    if ! diff -r share "$out" >/dev/null; then
        diff -r share "$out" | head -20
        echo "share/ is stale: run scripts/gen-cli-docs.sh and commit the result" >&2
        exit 1
    fi
else
    rm -rf share/man share/completions
    mkdir -p share
    cp -r "$out/man" "$out/completions" share/
fi
