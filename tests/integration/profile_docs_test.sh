#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/profile-format.md lists exactly the profile keys rtprov reads. The keys rtprov
# knows are asked of rtprov itself: '--set PATH.zz=1' on a map answers "unknown key
# 'zz'; known keys: ..." (profile::unknown_key), so the whole tree is walked from the
# top; a map of names (tuning.services) answers for 'PATH.NAME.zz'. The documented keys
# are the first cells of the tables under "## Top level", "## `board`", "## `tuning`"
# and "### `services.NAME`", without the rows of type "map".
# Usage: profile_docs_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1 src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
make_workdir

known() { # known PATH: the keys the map at PATH takes, or nothing for a leaf
    local set=zz=1
    [ -n "$1" ] && set=$1.zz=1
    "$rtprov" profiles show pi4 --set "$set" 2>&1 |
        sed -n "s/.*unknown key 'zz'; known keys: //p" | tr -d ',' | tr ' ' '\n'
}
walk() { # walk PATH: every leaf key below PATH, dotted
    local keys key path
    keys=$(known "$1")
    if [ -z "$keys" ] && [ -n "$1" ]; then
        # a map of names? its members answer
        keys=$(known "$1.NAME")
        if [ -n "$keys" ]; then
            walk "$1.NAME"
            return
        fi
        echo "$1"
        return
    fi
    for key in $keys; do
        path=$key
        [ -n "$1" ] && path=$1.$key
        walk "$path"
    done
}
walk "" | sort >"$work/code"

awk '
    /^## Top level/ { prefix = ""; on = 1; next }
    /^## `board`/ { prefix = "board."; on = 1; next }
    /^## `tuning`/ { prefix = "tuning."; on = 1; next }
    /^### `services.NAME`/ { prefix = "tuning.services.NAME."; on = 1; next }
    /^##/ { on = 0; next }
    on && /^\| `/ {
        split($0, cells, "|")
        key = cells[2]; type = cells[3]
        gsub(/[ `]/, "", key); gsub(/^ +| +$/, "", type)
        if (type != "map") print prefix key
    }' "$src/docs/profile-format.md" | sort >"$work/docs"

check "rtprov knows profile keys (walked $(wc -l <"$work/code") of them)" [ -s "$work/code" ]
check "the walk found a map of names (tuning.services.NAME.policy)" grep -qx 'tuning.services.NAME.policy' "$work/code"
missing=$(comm -23 "$work/code" "$work/docs" | xargs)
check "docs/profile-format.md documents every key rtprov reads (missing: '$missing')" [ -z "$missing" ]
extra=$(comm -13 "$work/code" "$work/docs" | xargs)
check "docs/profile-format.md documents no key rtprov does not read (extra: '$extra')" [ -z "$extra" ]
finish
