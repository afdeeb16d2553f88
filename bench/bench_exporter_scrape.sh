#!/usr/bin/env bash
# The cost of one scrape of a long profile of a machine with ~10k distinct stacks, and a soak of
# the always-on collector: run as root from the repository root after a build.
#   bench/bench_exporter_scrape.sh [BUILD_DIR [HZ [SCRAPES [SOAK_MINUTES]]]]
# One bench/stacks_load.c per CPU (16^4 possible stacks). The exporter samples at HZ (99: 58 s
# on 2 CPUs draw ~11,000 samples, ~10,000 distinct stacks), and after a full window serves
# SCRAPES profiles of 58 s one after the other: per scrape, the exporter's own build time (its
# perfscope_exporter_profile_build_seconds_total), its process CPU over the request minus what
# the sampler alone used in as long before it, the gzipped bytes and the distinct samples.
# Then, with SOAK_MINUTES > 0, a new exporter at 19 Hz for that long: CPU % and RSS every minute.
set -u
build=${1:-build}
hz=${2:-99}
scrapes=${3:-5}
soak=${4:-0}
P=$build/cli/perfscope
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
ncpu=$(getconf _NPROCESSORS_ONLN)
tck=$(getconf CLK_TCK)
cc -O1 -fno-omit-frame-pointer -o "$tmp/load" bench/stacks_load.c || exit 1
for ((c = 0; c < ncpu; c++)); do
	"$tmp/load" 100000 4 &
	pids+=($!)
done
port=$(python3 tests/cli/exporter_client.py free-port)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }

"$P" exporter --web.listen-address=127.0.0.1:"$port" --collector.profile \
	--collector.profile.frequency="$hz" 2>"$tmp/exp.log" &
e=$!
pids+=("$e")
sleep 62
echo "scrapes of a 58 s profile at $hz Hz on $ncpu busy CPUs:"
printf "%8s %12s %12s %10s %10s %10s\n" scrape "build ms" "req CPU ms" "bytes" "samples" "entries"
for s in $(seq 1 "$scrapes"); do
	b0=$(metric perfscope_exporter_profile_build_seconds_total)
	ent=$(metric perfscope_exporter_profile_stacks)
	c0=$(cpu_ticks "$e")
	t0=$(date +%s.%N)
	curl -s -o "$tmp/p.pb.gz" "http://127.0.0.1:$port/debug/pprof/profile?seconds=58"
	t1=$(date +%s.%N)
	c1=$(cpu_ticks "$e")
	b1=$(metric perfscope_exporter_profile_build_seconds_total)
	# the sampler's own CPU in a quiet stretch as long, to take out of the request's
	q0=$(cpu_ticks "$e")
	sleep "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
	q1=$(cpu_ticks "$e")
	n=$(go tool pprof -raw "$tmp/p.pb.gz" 2>/dev/null | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ +[0-9]+ +[0-9]+:/ { n++ } END { print n + 0 }')
	printf "%8d %12.1f %12.1f %10d %10d %10d\n" "$s" "$(awk -v a="$b0" -v b="$b1" 'BEGIN { print (b - a) * 1000 }')" \
		"$(awk -v a=$((c1 - c0)) -v q=$((q1 - q0)) -v h="$tck" 'BEGIN { print (a - q) * 1000 / h }')" \
		"$(stat -c %s "$tmp/p.pb.gz")" "$n" "$ent"
done
kill "$e"
wait "$e" 2>/dev/null
[ "$soak" -gt 0 ] || exit 0

"$P" exporter --web.listen-address=127.0.0.1:"$port" --collector.profile 2>"$tmp/soak.log" &
e=$!
pids+=("$e")
echo "soak: 19 Hz on $ncpu busy CPUs for $soak min; a 14 s profile scraped every 15 s (as Alloy would)"
( while kill -0 "$e" 2>/dev/null; do curl -s -o /dev/null "http://127.0.0.1:$port/debug/pprof/profile?seconds=14"; sleep 1; done ) &
pids+=($!)
printf "%6s %10s %10s %10s %10s\n" min "CPU %" "RSS MiB" "peak MiB" "entries"
c0=$(cpu_ticks "$e")
for m in $(seq 1 "$soak"); do
	sleep 60
	c1=$(cpu_ticks "$e")
	printf "%6d %10.3f %10.1f %10.1f %10s\n" "$m" "$(awk -v a="$c0" -v b="$c1" -v h="$tck" 'BEGIN { print (b - a) * 100 / h / 60 }')" \
		"$(awk '$1 == "VmRSS:" { print $2 / 1024 }' /proc/$e/status)" "$(awk '$1 == "VmHWM:" { print $2 / 1024 }' /proc/$e/status)" \
		"$(metric perfscope_exporter_profile_stacks)"
	c0=$c1
done
