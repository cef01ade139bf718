#!/usr/bin/env bash
# Fetch Debian's kernels that `flushcheck kernels` boots into DIR, through
# an apt configuration of this project's own (DIR/apt: a sources list with
# bookworm, its security archive, trixie, trixie-backports and sid, signed
# by the Debian archive keyring); the machine's own apt sources are read by
# nothing here and changed by nothing here.
#
# Only the kernel image is taken out of each package (dpkg-deb's data
# archive, one member), into DIR/img/boot/vmlinuz-RELEASE, whichever of the
# three layouts the package has: linux-image-* with /boot/vmlinuz-* (6.1 to
# 6.18), linux-binary-* with /boot/vmlinuz-* (6.19 to 7.1), linux-binary-*
# with /usr/lib/modules/RELEASE/vmlinuz (7.2 on). The package is deleted
# once its image is out (DIR/img keeps ~14 MB a kernel; the packages are up
# to 170 MB). No initramfs is made: the harness writes its own.
#
# usage: probe/fetch-kernels.sh [--set ci|all|NAME,...] DIR
#   ci   one kernel per lineage: 6.1, 6.12, 6.16, 7.3 (.ci/kernels)
#   all  6.1, 6.12, 6.16, 6.17, 6.18, 6.19, 7.0, 7.1, 7.2, 7.3
#   NAME a short name of the list below (6.12, 7.2, ...) or a package name
# Needs apt-get, apt-cache and dpkg-deb (a Debian machine); root is not
# needed. Each step is skipped when its result is there.
set -euo pipefail

# Short name, package, release (uname -r).
KERNELS="
6.1   linux-image-6.1.0-57-amd64        6.1.0-57-amd64
6.12  linux-image-6.12.117+deb13-amd64  6.12.117+deb13-amd64
6.16  linux-image-6.16.12+deb13-amd64   6.16.12+deb13-amd64
6.17  linux-image-6.17.13+deb13-amd64   6.17.13+deb13-amd64
6.18  linux-image-6.18.15+deb13-amd64   6.18.15+deb13-amd64
6.19  linux-binary-6.19.14+deb13-amd64  6.19.14+deb13-amd64
7.0   linux-binary-7.0.13+deb13-amd64   7.0.13+deb13-amd64
7.1   linux-binary-7.1.13+deb13-amd64   7.1.13+deb13-amd64
7.2   linux-binary-7.2.13+deb14-amd64   7.2.13+deb14-amd64
7.3   linux-binary-7.3.4+deb13-amd64    7.3.4+deb13-amd64
"
CI_SET="6.1,6.12,6.16,7.3"
ALL_SET="6.1,6.12,6.16,6.17,6.18,6.19,7.0,7.1,7.2,7.3"

usage() {
    echo "usage: $0 [--set ci|all|NAME,...] DIR" >&2
    exit 2
}
set_arg=all
while [ $# -gt 1 ]; do
    case $1 in
        --set) set_arg=$2; shift 2 ;;
        *) usage ;;
    esac
done
[ $# -eq 1 ] || usage
case $1 in -*) usage ;; esac
dir=$1
case $set_arg in
    ci) names=$CI_SET ;;
    all) names=$ALL_SET ;;
    *) names=$set_arg ;;
esac
for tool in apt-get apt-cache dpkg-deb; do
    command -v "$tool" >/dev/null || { echo "$0: needs $tool (a Debian machine)" >&2; exit 1; }
done
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { echo "$0: needs $keyring (package debian-archive-keyring)" >&2; exit 1; }

# Resolve the names before any download: an unknown one is an error.
wanted=()
IFS=',' read -r -a asked <<< "$names"
for n in "${asked[@]}"; do
    line=$(awk -v n="$n" '$1 == n || $2 == n' <<< "$KERNELS")
    if [ -z "$line" ]; then
        known=$(awk 'NF { printf "%s%s", sep, $1; sep = ", " }' <<< "$KERNELS")
        echo "$0: unknown kernel '$n': expected ci, all, or a list of: $known" >&2
        exit 2
    fi
    wanted+=("$line")
done

mkdir -p "$dir/img/boot" "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs"
dir=$(cd "$dir" && pwd)
cat > "$dir/apt/sources.list" <<EOF
deb [signed-by=$keyring] http://deb.debian.org/debian bookworm main
deb [signed-by=$keyring] http://deb.debian.org/debian-security bookworm-security main
deb [signed-by=$keyring] http://deb.debian.org/debian trixie main
deb [signed-by=$keyring] http://deb.debian.org/debian trixie-backports main
deb [signed-by=$keyring] http://deb.debian.org/debian sid main
EOF
apt_opts=(
    -o "Dir::Etc::SourceList=$dir/apt/sources.list"
    -o "Dir::Etc::SourceParts=/dev/null"
    -o "Dir::State::Lists=$dir/apt/lists"
    -o "Dir::Cache=$dir/apt/cache"
    -o "Dir::State::Status=/dev/null"
    -o "Debug::NoLocking=1"
    -o "APT::Sandbox::User=root"
)
updated=no
update() {
    if [ "$updated" = no ]; then
        echo "apt-get update (the project's own sources list: $dir/apt/sources.list)"
        apt-get "${apt_opts[@]}" -qq update
        updated=yes
    fi
}

for line in "${wanted[@]}"; do
    read -r short pkg release <<< "$line"
    img="$dir/img/boot/vmlinuz-$release"
    if [ -s "$img" ]; then
        echo "have $short: img/boot/vmlinuz-$release"
        continue
    fi
    debs=("$dir/debs/${pkg}"_*.deb)
    if [ ! -e "${debs[0]}" ]; then
        if [ ! -d "$dir/apt/lists" ] || ! ls "$dir/apt/lists"/*Packages* >/dev/null 2>&1; then
            update
        fi
        if ! (cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download "$pkg" 2>/dev/null); then
            update
            (cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download "$pkg")
        fi
        debs=("$dir/debs/${pkg}"_*.deb)
    fi
    # The image, wherever this package keeps it: one pass over the data
    # archive, nothing else unpacked (tar reports the pattern that does not
    # match this layout; the result is checked instead).
    tmp="$dir/debs/x-$short"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    dpkg-deb --fsys-tarfile "${debs[0]}" |
        tar -x -C "$tmp" --wildcards './boot/vmlinuz-*' './usr/lib/modules/*/vmlinuz' 2>/dev/null || true
    found=$(find "$tmp" -type f \( -name 'vmlinuz-*' -o -name vmlinuz \) | head -1)
    if [ -z "$found" ]; then
        echo "$0: no kernel image in ${debs[0]}" >&2
        exit 1
    fi
    mv "$found" "$img.part"
    rm -rf "$tmp"
    mv "$img.part" "$img"
    rm -f "${debs[0]}"
    echo "fetched $short: $pkg -> img/boot/vmlinuz-$release ($(du -k "$img" | cut -f1) KiB)"
done
echo "kernels in $dir/img/boot: $(cd "$dir/img/boot" && ls vmlinuz-* | sed 's/^vmlinuz-//' | paste -sd ' ' -)"
