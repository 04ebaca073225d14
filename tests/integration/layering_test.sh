#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The layering between provisioner/'s folders, enforced by the build: each folder's
# library compiles against an include view (provisioner/CMakeLists.txt, rtprov_folder)
# of the folders it may use. The rule is docs/ARCHITECTURE.md's folder table: a folder
# may include the headers of the folders in its "uses" cell and, through them, of the
# folders those use. For every pair of folders this test asks the compiler, with the
# folder's own include view, whether one header of the other is found (__has_include)
# and checks that it is exactly when the table allows it; that the build's direct USES are the table's; and that no include
# climbs out of its folder with '..' (which would go around the view).
# Usage: layering_test.sh CXX BUILD_DIR SOURCE_DIR
set -uo pipefail
cxx=$1 build=$2 src=$3
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
make_workdir

views=$build/include-view
mapfile -t folders < <(find "$src/provisioner" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
documented() { # documented FOLDER: the "uses" cell of its row, one folder per word
    awk -F'|' -v row="\`provisioner/$1/\`" '$2 ~ row { print $(NF - 1) }' "$src/docs/ARCHITECTURE.md" |
        tr -d ' ' | tr ',' '\n' | grep -v '^—$' | sort | xargs
}
allowed() { # allowed FOLDER: itself and what it uses, directly or through another
    local seen=" $1 " todo=("$1") next used
    while [ ${#todo[@]} -gt 0 ]; do
        next=${todo[0]}
        todo=("${todo[@]:1}")
        for used in $(documented "$next"); do
            [[ $seen == *" $used "* ]] && continue
            seen+="$used "
            todo+=("$used")
        done
    done
    echo "$seen"
}
for folder in "${folders[@]}"; do
    [ "$folder" = cli ] && continue
    check "$folder has an include view" [ -d "$views/$folder/provisioner" ]
    built=$(tr ';' '\n' <"$views/$folder/uses" 2>/dev/null | sort | xargs)
    check "docs/ARCHITECTURE.md lists what $folder uses as the build does ('$(documented "$folder")' = '$built')" \
        [ "$(documented "$folder")" = "$built" ]
    may=$(allowed "$folder")
    wrong=()
    for other in "${folders[@]}"; do
        header=$(find "$src/provisioner/$other" -maxdepth 1 -name '*.hpp' -printf '%f\n' | sort | head -n 1)
        # found or not, whatever the header itself includes
        printf '#if !__has_include("provisioner/%s/%s")\n#error not visible\n#endif\n' \
            "$other" "$header" >"$work/probe.cpp"
        compiles=no
        "$cxx" -std=c++20 -E -I "$views/$folder" -o /dev/null "$work/probe.cpp" 2>/dev/null && compiles=yes
        expected=no
        [[ $may == *" $other "* ]] && expected=yes
        [ "$compiles" = "$expected" ] || wrong+=("$other: compiles $compiles, allowed $expected")
    done
    check "in $folder a header compiles exactly when the table allows its folder (${wrong[*]:-})" \
        [ ${#wrong[@]} -eq 0 ]
done
climbing=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*\.\./' "$src/provisioner" | sed "s|^$src/||")
check "no include in provisioner/ climbs out with '..' (${climbing//$'\n'/; })" [ -z "$climbing" ]
finish
