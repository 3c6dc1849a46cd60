#!/usr/bin/env bash
# Checks and unit-tests the Prometheus alert rules that PushRelay ships (deploy/prometheus/alerts.yml).
#
# Usage: scripts/alerts-test.sh
#
# Installs promtool if it is missing (Debian's `prometheus` package, through scripts/bootstrap.sh: root or sudo; the
# package's service is not started), then runs `promtool check rules` on the rules and `promtool test rules` on
# their tests (deploy/prometheus/alerts.test.yml), and checks that every PromQL expression of the Grafana dashboard
# (deploy/grafana/pushrelay.json) parses, with Grafana's variables replaced (promtool check rules on a rule file made
# of them, in a temporary folder). That every metric the rules and the Grafana dashboard name is one
# the relay exports is checked by the Swift tests (Tests/pushrelayTests/MonitoringTests.swift). Exits non-zero on
# the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v promtool >/dev/null 2>&1; then
    echo "alerts-test: installing promtool (Debian package prometheus)"
    ./scripts/bootstrap.sh prometheus
    # Debian's package enables and starts Prometheus itself where systemd runs; nothing here needs it.
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
        systemctl stop prometheus || true
    fi
fi

echo "alerts-test: promtool check rules deploy/prometheus/alerts.yml"
promtool check rules deploy/prometheus/alerts.yml
echo "alerts-test: promtool test rules deploy/prometheus/alerts.test.yml"
promtool test rules deploy/prometheus/alerts.test.yml

echo "alerts-test: the dashboard's expressions parse (deploy/grafana/pushrelay.json, through promtool check rules)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - deploy/grafana/pushrelay.json "$work/dashboard-rules.yml" <<'PY'
import json
import sys

dashboard = json.load(open(sys.argv[1]))
expressions = []

def walk(node):
    if isinstance(node, dict):
        if isinstance(node.get("expr"), str):
            expressions.append(node["expr"])
        for value in node.values():
            walk(value)
    elif isinstance(node, list):
        for value in node:
            walk(value)

walk(dashboard.get("panels", []))
if not expressions:
    sys.exit("alerts-test: no expression found in the dashboard")
variables = {"$__rate_interval": "5m", "$__range": "1h", "$__interval": "1m", "$instance": ".*"}
with open(sys.argv[2], "w") as out:
    out.write("groups:\n  - name: dashboard\n    rules:\n")
    for number, expression in enumerate(expressions):
        for name, value in variables.items():
            expression = expression.replace(name, value)
        out.write(f"      - record: dashboard:expression_{number}\n        expr: {json.dumps(expression)}\n")
print(f"alerts-test: {len(expressions)} expressions")
PY
promtool check rules "$work/dashboard-rules.yml"
