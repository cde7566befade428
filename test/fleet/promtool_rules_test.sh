#!/bin/sh
# File: promtool_rules_test.sh
# Layer: test (fleet). Runs the shipped rules' unit tests (deploy/prometheus/kairos_rules_test.yml)
# with Prometheus' own rule engine, `promtool test rules`. Skipped (exit 77) with a message only
# when promtool is not installed (Debian: apt-get install prometheus).
# usage: promtool_rules_test.sh DEPLOY_DIR
dir=$1
if ! command -v promtool >/dev/null 2>&1; then
  echo "SKIP: promtool not found (apt-get install prometheus); the shipped rules were not tested"
  exit 77
fi
cd "$dir" || exit 1
promtool check rules kairos_rules.yml || exit 1
promtool check config prometheus.yml || exit 1
exec promtool test rules kairos_rules_test.yml
