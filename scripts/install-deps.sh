#!/usr/bin/env bash
# Installs every Debian 12 package perfscope needs to build, test and benchmark: the one list.
set -euo pipefail

BUILD_PKGS=(
	build-essential pkg-config meson ninja-build clang llvm lld
	libtraceevent-dev libtracefs-dev libdw-dev libelf-dev libbpf-dev bpftool
	libmicrohttpd-dev libgnutls28-dev libyaml-dev libcrypt-dev
	zlib1g-dev liblzma-dev libiberty-dev
	libprotobuf-c-dev protobuf-c-compiler
)
TEST_PKGS=(
	libcmocka-dev libclang-rt-14-dev
	linux-perf prometheus prometheus-node-exporter
	curl jq procps python3 bpftrace openssl groff-base man-db systemd time
	golang-go nodejs
)

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: run as root (it calls apt-get)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The Debian prometheus packages would start their services on install; the tests start their own
# on loopback. A policy-rc.d that denies starts (exit 101) keeps packages installed now from
# starting anything, and leaves services the machine already runs alone.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${BUILD_PKGS[@]}" "${TEST_PKGS[@]}" >/dev/null
echo "install-deps.sh: all packages present"
