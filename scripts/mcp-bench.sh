#!/usr/bin/env bash
# Measures the cost of one MCP tool call side by side: `fencefs serve`
# (built from this checkout), the Node reference server
# @modelcontextprotocol/server-filesystem (installed from npm into
# $FENCEFS_MCP_BENCH_DIR) and the Go SDK's floor (a server on the same SDK
# whose tools return fencefs's texts with no work), over stdio and
# streamable HTTP. Prints a table of median round trips and server CPU
# per call.
#
# Usage: scripts/mcp-bench.sh [-n CALLS]     (default 1000 calls per cell)
#
# Without node and npm the Node column is skipped, with a warning.
# Run it alone on the machine: the medians are wall-clock times.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${FENCEFS_MCP_BENCH_DIR:-/tmp/fencefs-mcp-bench}"
mkdir -p "$dir"
log() { printf '== %s\n' "$*" >&2; }

go build -o "$dir/fencefs" ./cmd/fencefs
go build -o "$dir/mcp-bench" ./bench/cmd/mcp-bench

node_args=()
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
	entry="$dir/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
	if [ ! -f "$entry" ]; then
		log "installing @modelcontextprotocol/server-filesystem from npm"
		npm install --silent --no-audit --no-fund --prefix "$dir/node" @modelcontextprotocol/server-filesystem >&2
	fi
	log "Node $(node --version), server-filesystem $(node -p "require('$dir/node/node_modules/@modelcontextprotocol/server-filesystem/package.json').version")"
	node_args=(-node "$entry")
else
	log "WARNING: node or npm is not installed (apt-get install -y nodejs npm); the Node reference server is SKIPPED"
fi

args=("$@")
[ "${#args[@]}" -eq 0 ] && args=(-n 1000)
log "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$dir/mcp-bench" -fencefs "$dir/fencefs" "${node_args[@]}" "${args[@]}"
log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
