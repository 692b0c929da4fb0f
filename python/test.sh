#!/usr/bin/env bash
# The Python package's tests (README, "From Python"): a virtual environment in
# target/python-venv, the package built from this clone and installed there, then pytest.
# The package is built with the dev profile, whose compiled dependencies `cargo test` shares;
# POSLAB_PY_PROFILE=release builds it as `pip install ./python` does.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/python-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r python/tests/requirements.txt
# The command line the tests compare the package's answers with.
cargo build --locked --bin poslab
MATURIN_PEP517_ARGS="--profile ${POSLAB_PY_PROFILE:-dev}" \
  "$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps ./python
POSLAB_CLI="$PWD/target/debug/poslab" "$venv/bin/python" -m pytest -q python/tests "$@"
