#!/usr/bin/env bash
# The source tree's layout rules (docs/ARCHITECTURE.md, whose folder table must say the
# same as `may` below):
#   - each folder includes only its own headers and those of the folders below it;
#   - a folder with an interface header named after it (src/cpu/cpu.h) is used from
#     outside through that header and the headers it includes, never its internals;
#   - no two source files under src/ and sim/ share a name;
#   - no source file is longer than 700 lines.
set -u
root=${1:-.}
cd "$root" || exit 2

# folder -> the folders whose headers it may include (besides its own)
declare -A may=(
    [base]=""
    [parse]="base"
    [store]="parse base"
    [gpu]="base"
    [proc]="store parse base"
    [cpu]="proc store parse base"
    [kube]="store parse base"
    [accounting]="gpu cpu proc kube store parse base"
    [http]="store parse base"
    [daemon]="accounting http gpu cpu proc kube store parse base sim"
    [top]="daemon http kube store parse base"
    [main]="top daemon base"
    [sim]="gpu base"
)

# The source files: what git tracks or would track, else everything (a tarball).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files --cached --others --exclude-standard 'src/*.[ch]' 'sim/*.[ch]')
else
    mapfile -t files < <(find src sim -name '*.[ch]' | sort)
fi

# Headers of a folder that other folders may include besides its interface header's.
declare -A extra_public=([gpu]="nvml_abi.h dcgm_abi.h" [kube]="curl_loader.h")

declare -A home dup
for f in "${files[@]}"; do
    name=$(basename "$f")
    dir=$(dirname "$f")
    folder=${dir##*/}
    [[ $dir == src ]] && folder=main
    # A folder's eBPF programs and their headers belong to that folder (below too).
    [[ $folder == bpf ]] && { dir=${dir%/bpf}; folder=${dir##*/}; }
    if [[ -n ${home[$name]:-} ]]; then
        dup[$name]="${home[$name]} $folder"
    fi
    home[$name]=$folder
done

# folder -> " header header ... " that other folders may include
declare -A public
for folder in "${!may[@]}"; do
    iface=src/$folder/$folder.h
    [[ -f $iface ]] || continue
    public[$folder]=" $folder.h ${extra_public[$folder]:-} "
    while IFS= read -r inc; do
        h=${inc#*\"}
        public[$folder]+="${h%\"*} "
    done < <(grep -E '^#include "' "$iface")
done

failed=0
for name in "${!dup[@]}"; do
    echo "check-layers: $name exists twice (${dup[$name]})"
    failed=1
done

for f in "${files[@]}"; do
    [[ -f $f ]] || continue
    dir=$(dirname "$f")
    folder=${dir##*/}
    [[ $dir == src ]] && folder=main
    # A folder's eBPF programs (built for the BPF target) belong to that folder.
    [[ $folder == bpf ]] && { dir=${dir%/bpf}; folder=${dir##*/}; }
    lines=$(wc -l <"$f")
    if ((lines > 700)); then
        echo "check-layers: $f has $lines lines (at most 700)"
        failed=1
    fi
    while IFS= read -r inc; do
        h=${inc#*\"}
        h=${h%\"*}
        owner=${home[$h]:-}
        [[ -z $owner || $owner == "$folder" ]] && continue
        if [[ " ${may[$folder]} " != *" $owner "* ]]; then
            echo "check-layers: $f includes $h from src/$owner, which $folder may not use"
            failed=1
        elif [[ -n ${public[$owner]:-} && ${public[$owner]} != *" $h "* ]]; then
            echo "check-layers: $f includes $h, internal to src/$owner (use $owner.h)"
            failed=1
        fi
    done < <(grep -E '^#include "' "$f")
done
# docs/ARCHITECTURE.md: one row per folder whose last column names what it may include.
doc=docs/ARCHITECTURE.md
for folder in "${!may[@]}"; do
    [[ $folder == daemon ]] && continue # "everything"
    case $folder in
    main) key='`src/main.c`' ;;
    sim) key='`sim/`' ;;
    *) key="\`src/$folder\`" ;;
    esac
    row=$(grep -F "| $key |" "$doc" | head -1)
    if [[ -z $row ]]; then
        echo "check-layers: $doc has no row for $key"
        failed=1
        continue
    fi
    last=${row%|}
    last=${last##*|}
    said=$(for w in $last; do
        w=${w//[^a-z]/}
        [[ -n ${may[$w]+x} ]] && echo "$w"
    done | sort -u | tr '\n' ' ')
    want=$(printf '%s\n' ${may[$folder]} | grep -v '^$' | sort -u | tr '\n' ' ')
    if [[ $said != "$want" ]]; then
        echo "check-layers: $doc says $key may include '$said', the rule is '$want'"
        failed=1
    fi
done

((failed == 0)) && echo "check-layers: includes point down through interfaces, names are unique," \
    "files are short"
exit $failed
