#!/usr/bin/env bash
# The layering between provisioner/'s folders is enforced by the build: each folder's
# library compiles against an include view (provisioner/CMakeLists.txt, rtprov_folder)
# holding only the folders it may use. For every pair of folders, a file in FOLDER
# including a header of OTHER must preprocess exactly when the view holds OTHER, and
# the folders each one uses directly must be the ones docs/ARCHITECTURE.md shows.
# Usage: layering_test.sh CXX BUILD_DIR SOURCE_DIR
set -uo pipefail
cxx=$1 build=$2 src=$3
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
make_workdir

views=$build/include-view
mapfile -t folders < <(find "$src/provisioner" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
check "every folder but cli has a view" \
    [ "$(find "$views" -mindepth 1 -maxdepth 1 -type d | wc -l)" = "$((${#folders[@]} - 1))" ]
for folder in "${folders[@]}"; do
    [ "$folder" = cli ] && continue
    view=$views/$folder/provisioner
    check "$folder has a view" [ -d "$view" ]
    wrong=()
    for other in "${folders[@]}"; do
        header=$(find "$src/provisioner/$other" -maxdepth 1 -name '*.hpp' -printf '%f\n' | sort | head -n 1)
        echo "#include \"provisioner/$other/$header\"" >"$work/probe.cpp"
        if "$cxx" -std=c++20 -E -I "$views/$folder" -o /dev/null "$work/probe.cpp" 2>/dev/null; then
            compiles=yes
        else
            compiles=no
        fi
        expected=no
        [ -e "$view/$other" ] && expected=yes
        [ "$compiles" = "$expected" ] || wrong+=("$other: $compiles")
    done
    check "in $folder an include of a folder outside its view fails, inside compiles (${wrong[*]:-})" \
        [ ${#wrong[@]} -eq 0 ]
    # docs/ARCHITECTURE.md's folder table: the last cell of the row of `provisioner/FOLDER/`.
    documented=$(awk -F'|' -v row="\`provisioner/$folder/\`" '$2 ~ row { print $(NF - 1) }' \
        "$src/docs/ARCHITECTURE.md" | tr -d ' ' | tr ',' '\n' | grep -v '^—$' | sort | xargs)
    built=$(tr ';' '\n' <"$views/$folder/uses" | sort | xargs)
    check "docs/ARCHITECTURE.md lists what $folder uses as the build does ('$documented' = '$built')" \
        [ "$documented" = "$built" ]
done
finish
