#!/usr/bin/env bash
# Fetch the two Debian kernels that `flushcheck kernels` boots into DIR:
# the linux-image packages (apt-get download, no installation) and, unpacked
# with dpkg -x, their images in DIR/img/boot/vmlinuz-*. No initramfs is made:
# the harness writes its own (the probe as /init), so the packages' own
# initramfs hooks never run. Each step is skipped when its result is there.
#
# usage: probe/fetch-kernels.sh DIR   (root on Debian 12 with its security
# archive in the apt sources, which a stock bookworm has)
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1
packages=(linux-image-6.1.0-57-amd64 linux-image-6.12.107+deb12-amd64)
for tool in apt-get dpkg; do
    command -v "$tool" >/dev/null || { echo "$0: needs $tool (a Debian machine)" >&2; exit 1; }
done
mkdir -p "$dir/img"
cd "$dir"
updated=no
for p in "${packages[@]}"; do
    release=${p#linux-image-}
    debs=("${p}"_*.deb)
    if [ -e "${debs[0]}" ]; then
        echo "have ${debs[0]}"
    else
        # apt-get download writes into the current directory.
        if ! apt-get download "$p"; then
            if [ "$updated" = yes ]; then
                echo "$0: cannot download $p" >&2
                exit 1
            fi
            echo "download of $p failed: apt-get update, then again"
            apt-get update -qq
            updated=yes
            apt-get download "$p"
        fi
        debs=("${p}"_*.deb)
        echo "downloaded ${debs[0]}"
    fi
    if [ -e "img/boot/vmlinuz-$release" ]; then
        echo "have img/boot/vmlinuz-$release"
    else
        dpkg -x "${debs[0]}" img
        echo "unpacked ${debs[0]} into $dir/img (img/boot/vmlinuz-$release)"
    fi
done
echo "kernels in $dir/img/boot: $(cd img/boot && ls vmlinuz-* | paste -sd " " -)"
