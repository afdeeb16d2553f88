#!/usr/bin/env bash
# Every example of --help, the man pages and README.md runs and prints something
# (tests/cli/examples_run.py; TAP). Once, in the gcc build: the examples test the docs, not the code.
: "${PERFSCOPE:?}" "${SOURCE_ROOT:?}" "${WORKLOAD:?}"
exec python3 "$(dirname "$0")/examples_run.py"
