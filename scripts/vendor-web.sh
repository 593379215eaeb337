#!/usr/bin/env bash
# Copies the web faces' third-party browser libraries from npm into crates/web/assets/vendor.
#
# The versions are pinned in crates/web/vendor/package.json + package-lock.json. The copied files
# are committed, so building the Rust binary (which embeds crates/web/assets) never needs npm or a
# network. Run this only to change a version: edit package.json, `npm install --package-lock-only`
# in crates/web/vendor, then run this script and commit the result.
#
# Licence files are copied next to the code they cover. `*.md` assets are not embedded in the
# binary, so a LICENSE.md is copied as LICENSE.txt.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/crates/web/vendor"
dst="$root/crates/web/assets/vendor"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cp "$src/package.json" "$src/package-lock.json" "$tmp/"
(cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
nm="$tmp/node_modules"

rm -rf "$dst"
mkdir -p "$dst/preact" "$dst/htm" "$dst/chart.js"

# preact (MIT) and its hooks, ES modules. The hooks module imports the bare specifier "preact";
# it is rewritten to the relative file so that the pages need no import map (no inline script, so
# a `script-src 'self'` Content-Security-Policy holds). That one specifier is the only edit.
cp "$nm/preact/dist/preact.module.js" "$dst/preact/preact.module.js"
sed 's#from"preact"#from"./preact.module.js"#g' "$nm/preact/hooks/dist/hooks.module.js" > "$dst/preact/hooks.module.js"
grep -q 'from"./preact.module.js"' "$dst/preact/hooks.module.js" || { echo "preact/hooks: the import of preact was not found" >&2; exit 1; }
cp "$nm/preact/LICENSE" "$dst/preact/LICENSE"

# htm (Apache-2.0): tagged templates instead of JSX, so the pages need no build step.
cp "$nm/htm/dist/htm.module.js" "$dst/htm/htm.module.js"
cp "$nm/htm/LICENSE" "$dst/htm/LICENSE"

# Chart.js (MIT), the UMD build (sets window.Chart); it bundles @kurkle/color (MIT).
cp "$nm/chart.js/dist/chart.umd.js" "$dst/chart.js/chart.umd.js"
cp "$nm/chart.js/LICENSE.md" "$dst/chart.js/LICENSE.txt"
cp "$nm/@kurkle/color/LICENSE.md" "$dst/chart.js/kurkle-color.LICENSE.txt"

# A record of what was copied, from which exact versions.
node -e '
const lock = require(process.argv[1]);
const v = (p) => lock.packages["node_modules/" + p].version;
console.log(JSON.stringify({ preact: v("preact"), htm: v("htm"), "chart.js": v("chart.js"), "@kurkle/color": v("@kurkle/color") }, null, 2));
' "$src/package-lock.json" > "$dst/versions.json"

echo "vendored into $dst:"
(cd "$dst" && find . -type f | sort)
