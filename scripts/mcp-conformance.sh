#!/usr/bin/env bash
# Runs the official MCP conformance suite's SEP-2640 (skills over MCP)
# scenarios against `fencefs serve --http --skills`: stateless at
# 2025-11-25 and 2026-07-28, --stateful at 2025-11-25 (the SDK serves
# 2026-07-28 over stateless HTTP only). The suite and a Node 22 runtime come from npm into a
# throwaway directory (set CONFORMANCE_DIR to keep them between runs);
# the skills are a fixture written here: two skills, one with a
# subdirectory, so every directory check has something to read.
#
#   scripts/mcp-conformance.sh            # the sep-2640 scenarios
#   SCENARIOS="a b" scripts/mcp-conformance.sh
#
# Any FAILURE in a scenario fails the script; WARNINGs are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${CONFORMANCE_VERSION:-0.2.0-alpha.12}
scenarios=${SCENARIOS:-"sep-2640-skills-enumeration sep-2640-skills-directory sep-2640-skills-manifest"}

dir=${CONFORMANCE_DIR:-}
work=$(mktemp -d)
cleanup() {
	if [ -n "${pid:-}" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
if [ -z "$dir" ]; then dir=$work/npm; fi
mkdir -p "$dir"
if [ ! -x "$dir/node_modules/node/bin/node" ] || [ ! -f "$dir/node_modules/@modelcontextprotocol/conformance/package.json" ] ||
	! grep -q "\"version\": \"$version\"" "$dir/node_modules/@modelcontextprotocol/conformance/package.json"; then
	(cd "$dir" && { [ -f package.json ] || npm init -y >/dev/null; } &&
		npm install --no-audit --no-fund --silent "@modelcontextprotocol/conformance@$version" node@22 >/dev/null)
	# node@22's binary is unpacked by its install script, which npm may
	# not run on its own.
	if ! "$dir/node_modules/node/bin/node" --version >/dev/null 2>&1; then
		(cd "$dir/node_modules/node" && node installArchSpecificPackage.js >/dev/null)
	fi
fi
node=$dir/node_modules/node/bin/node
suite=$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
"$node" --version | grep -q '^v22\.' || { echo "mcp-conformance: need Node 22, got $("$node" --version)" >&2; exit 1; }

# The fixture: skills/alpha (SKILL.md, scripts/run.sh, docs/guide.md)
# and skills/beta (SKILL.md).
root=$work/root
mkdir -p "$root/skills/alpha/scripts" "$root/skills/alpha/docs" "$root/skills/beta"
cat >"$root/skills/alpha/SKILL.md" <<'EOF'
---
name: alpha
description: Formats the reports of the alpha pipeline. Use when asked to format an alpha report.
---
# Alpha

Run scripts/run.sh, then read docs/guide.md.
EOF
printf '#!/bin/sh\necho alpha\n' >"$root/skills/alpha/scripts/run.sh"
printf '# Guide\n\nThe alpha guide.\n' >"$root/skills/alpha/docs/guide.md"
cat >"$root/skills/beta/SKILL.md" <<'EOF'
---
name: beta
description: Checks the beta configuration. Use when asked whether a beta config is valid.
---
# Beta

Read the configuration and say what is wrong with it.
EOF

go build -o "$work/fencefs" ./cmd/fencefs
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

fail=0
for mode in stateless stateful; do
	addr=127.0.0.1:$(port)
	flags=(serve --root "$root" --skills skills --http "$addr" --log-level warn)
	[ "$mode" = stateful ] && flags+=(--stateful)
	"$work/fencefs" "${flags[@]}" 2>"$work/serve.log" &
	pid=$!
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://$addr/mcp" && break
		sleep 0.1
	done
	for sc in $scenarios; do
		specs="2025-11-25 2026-07-28"
		# The SDK serves 2026-07-28 on stateless HTTP only (a stateful
		# server answers it with -32022 and its legacy versions).
		[ "$mode" = stateful ] && specs=2025-11-25
		for spec in $specs; do
			out=$work/out-$mode-$sc-$spec
			echo "== $sc ($mode, --spec-version $spec)"
			timeout 120 "$node" "$suite" server --url "http://$addr/mcp" --scenario "$sc" --spec-version "$spec" --force -o "$out" >"$out.log" 2>&1 || true
			"$node" -e '
				const fs = require("fs"), path = require("path");
				const dir = process.argv[1];
				let files = [];
				try { files = fs.readdirSync(dir).map(d => path.join(dir, d, "checks.json")).filter(f => fs.existsSync(f)); } catch (e) {}
				if (files.length !== 1) {
					console.log("  FAILURE the suite wrote no checks:\n" + fs.readFileSync(process.argv[2], "utf8").slice(0, 1500));
					process.exit(1);
				}
				const checks = JSON.parse(fs.readFileSync(files[0], "utf8"));
				let bad = 0, n = {};
				for (const c of checks) {
					n[c.status] = (n[c.status] || 0) + 1;
					if (c.status === "FAILURE") { bad++; console.log("  FAILURE", c.id, "-", c.errorMessage || ""); }
					if (c.status === "WARNING") console.log("  WARNING", c.id, "-", c.errorMessage || "");
				}
				console.log("  " + JSON.stringify(n));
				process.exit(bad ? 1 : 0);
			' "$out" "$out.log" || fail=1
		done
	done
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
done
if [ "$fail" -ne 0 ]; then
	echo "mcp-conformance: failures above" >&2
	exit 1
fi
echo "mcp-conformance: every check of $scenarios passed (stateless at 2025-11-25 and 2026-07-28, stateful at 2025-11-25)"
