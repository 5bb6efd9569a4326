#!/bin/bash
# tbench-plot and tbench-compare on a made-up sweep that varies two knobs
# (mtu for tcp, placement for every backend): the lines of the plots and
# their titles (from the gnuplot scripts and data that --keep-data keeps,
# and the SVG's text), --by's panels, and the points compare matches.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

STATS="${top_builddir:-.}/tbench-stats"
PLOT="$SRCDIR/scripts/tbench-plot"
COMPARE="$SRCDIR/scripts/tbench-compare"
export TBENCH_STATS="$STATS"
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot not installed (apt-get install gnuplot-nox)"; exit 77; }

# A runs.csv of this version's columns: tcp at mtu 1500 and 65536, pipe and
# nop (mtu n/a), each with placement same and split, at 1, 2, 4 clients, 2
# reps. MB/sec = base * sqrt(clients) * 1.6 (mtu 65536) * 1.3 (split) + 3 rep,
# base tcp 300, pipe 800, nop 4000; SCALE multiplies the tcp rows at mtu
# 65536, placement split; PLACEMENT replaces every placement.
make_runs() { # SCALE [PLACEMENT]
	"$STATS" row --header | awk -F, -v scale="$1" -v only="${2:-}" 'NR == 1 {
		n = split($0, h, ","); print
		split("tcp pipe nop", B, " ")
		for (bi = 1; bi <= 3; bi++) for (m = 1; m <= 2; m++) for (p = 1; p <= 2; p++)
		for (c = 1; c <= 4; c *= 2) for (rep = 1; rep <= 2; rep++) {
			b = B[bi]
			if (b != "tcp" && m == 2) continue
			delete v
			v["backend"] = b; v["clients"] = c; v["rep"] = rep; v["model"] = "processes"; v["status"] = "ok"
			v["offload"] = b == "tcp" ? "on" : "n/a"
			v["mtu"] = b == "tcp" ? (m == 1 ? 1500 : 65536) : "n/a"
			v["placement"] = only != "" ? only : p == 1 ? "same" : "split"
			mb = (b == "nop" ? 4000 : b == "pipe" ? 800 : 300) * sqrt(c) * (m == 2 ? 1.6 : 1) * (p == 2 ? 1.3 : 1) + rep * 3
			if (b == "tcp" && m == 2 && p == 2) mb *= scale
			v["mb_per_sec"] = mb; v["ops_per_sec"] = mb * 200; v["cpu_us_per_mb"] = 1e6 / mb
			line = ""
			for (i = 1; i <= n; i++) line = line (i > 1 ? "," : "") (h[i] in v ? v[h[i]] : "")
			print line
		}
	}'
}

# The titles of the lines of a kept gnuplot script, one a line, in order
# (gnuplot string literals in single quotes).
titles() { # SCRIPT: the lines' titles (not the key's word on the error bars)
	grep "^  " "$1" | grep -o "title '[^']*'" | sed "s/^title '//; s/'\$//" | grep -v '^bars: ' | awk '!seen[$0]++'
}

# The knobs not varied: "-", as tbench-stats row writes them.
unvaried() {
	awk -F, -v OFS=, -v knobs="$("$STATS" row --knobs | paste -sd,)" '
		NR == 1 { split(knobs, k, ","); for (i = 1; i <= NF; i++) for (j in k) if ($i == k[j]) knob[i] = 1 }
		NR > 1 { for (i in knob) if ($i == "") $i = "-" } { print }'
}

sweep="$TL_TMP/sweep"
mkdir -p "$sweep"
make_runs 1 | unvaried >"$sweep/runs.csv"

plain() {
	expect_exit 0 "tbench-plot of a sweep varying mtu and placement" "$PLOT" --keep-data "$TL_TMP/keep" "$sweep"
	local f
	for f in throughput cost cpu; do
		[ -s "$sweep/$f.png" ] && [ -s "$sweep/$f.svg" ] && ok "$f.png and $f.svg" || not_ok "no $f plot"
	done
	local want="tcp mtu=1500 placement=same
tcp mtu=1500 placement=split
tcp mtu=65536 placement=same
tcp mtu=65536 placement=split
pipe placement=same
pipe placement=split"
	[ "$(titles "$TL_TMP/keep/throughput.gp" | grep -v -e '^single runs$')" = "$want" ] &&
		ok "one line per backend x mtu x placement, titled by the knobs that vary; nop apart" ||
		not_ok "throughput titles: $(titles "$TL_TMP/keep/throughput.gp")"
	# nop (4004.5 to 10404.5 MB/sec) would force a log axis: its range is in the title instead
	grep -q 'nop (no transport, the harness alone) is left off this axis: 400[45]–1040[45] MB/sec; --logy draws it' \
		"$TL_TMP/keep/throughput.gp" && ok "nop's range in the title" || not_ok "nop: $(grep 'set title' "$TL_TMP/keep/throughput.gp")"
	# what is left spans less than the factor 20 that makes the axis log
	cat "$TL_TMP/keep"/tp.*.dat "$TL_TMP/keep"/tp.*.runs | awk 'NR == 1 || $2 < lo { lo = $2 } $2 > hi { hi = $2 }
		END { exit !(hi / lo < 20) }' && ok "a linear axis for the transports" || not_ok "the transports span a factor 20"
	check "a footnote says what the bars are" grep -q "^set label 99 'bars: 95% interval of the mean, 2 reps'" "$TL_TMP/keep/throughput.gp"
	check "and CPU per MB's" grep -q 'nop (no transport, the harness alone) is left off this axis: [0-9]*–[0-9]* µs per MB' \
		"$TL_TMP/keep/cpu.gp"
	expect_exit 0 "tbench-plot --logy" "$PLOT" --logy --keep-data "$TL_TMP/keep-logy" --out-dir "$TL_TMP/logy" "$sweep"
	titles "$TL_TMP/keep-logy/throughput.gp" | grep -qx 'nop placement=split' && ok "--logy draws nop" ||
		not_ok "--logy titles: $(titles "$TL_TMP/keep-logy/throughput.gp")"
	grep -q '<text>tcp mtu=65536 placement=split</text>' "$sweep/throughput.svg" &&
		ok "the SVG's key says it" || not_ok "no 'tcp mtu=65536 placement=split' in throughput.svg"
	# its means: 300 * 1.6 * 1.3 * sqrt(4) + 4.5 at 4 clients
	local n
	n="$(awk -F'\t' '$4 == "tcp mtu=65536 placement=split" { print $1 }' "$TL_TMP/keep/tp.list")"
	[ "$(awk '$1 == 4 { print $2 }' "$TL_TMP/keep/tp.0.$n.dat")" = 1252.5 ] &&
		ok "the line's mean at 4 clients" || not_ok "tcp mtu=65536 split: $(cat "$TL_TMP/keep/tp.0.$n.dat")"
	[ "$(wc -l <"$TL_TMP/keep/tp.0.$n.runs")" -eq 6 ] && ok "and its 6 single runs" || not_ok "single runs"
	[ "$(titles "$TL_TMP/keep/cost.gp" | grep -c '^nop')" -eq 0 ] && [ "$(titles "$TL_TMP/keep/cost.gp" | grep -c mtu=)" -eq 4 ] &&
		ok "cost: the same lines but nop's" || not_ok "cost titles: $(titles "$TL_TMP/keep/cost.gp")"
	# a backend's colour is its place in tbench -b list: the first (and its first line) the first colour
	local first
	first="$("$TBENCH" -b list | awk 'NR == 1 { print $1 }')"
	grep -q "lc rgb '#1f77b4'.* title '$first " "$TL_TMP/keep/throughput.gp" &&
		ok "$first, first in the registry, in the first colour" || not_ok "colours: $(grep -o "lc rgb '#[0-9a-f]*'.* title '[^']*" "$TL_TMP/keep/throughput.gp" | head -3)"
	# pipe - nop is a layer beside the stack (decompose --model): the sweep
	# has both, but no cost figures to draw it from
	grep -q 'no siblings chart: no cost figures' "$TL_TMP/err" && ok "no siblings chart, and why" ||
		not_ok "siblings: $(grep siblings "$TL_TMP/err")"
}

faceted() {
	local out="$TL_TMP/by" keep="$TL_TMP/keep-by"
	expect_exit 0 "tbench-plot --by placement" "$PLOT" --by placement --out-dir "$out" --keep-data "$keep" "$sweep"
	[ -s "$out/throughput.png" ] && [ -s "$out/throughput.svg" ] && ok "throughput in panels" || not_ok "no faceted plot"
	[ "$(grep -c "^set title 'placement=" "$keep/throughput.gp")" -eq 4 ] && # twice: PNG and SVG
		grep -q "^set title 'placement=split'" "$keep/throughput.gp" && ok "one panel per placement" ||
		not_ok "panels: $(grep '^set title' "$keep/throughput.gp")"
	[ "$(titles "$keep/throughput.gp" | grep -v -e '^single runs$' | paste -sd,)" = "tcp mtu=1500,tcp mtu=65536,pipe" ] &&
		ok "the lines of a panel: the other knob's values" || not_ok "--by titles: $(titles "$keep/throughput.gp")"
	local n
	n="$(awk -F'\t' '$4 == "tcp mtu=65536" { print $1 }' "$keep/tp.list")"
	[ "$(awk -F'\t' '$2 == "split" { print $1 }' "$keep/tp.facets")" = 1 ] &&
		[ "$(awk '$1 == 4 { print $2 }' "$keep/tp.1.$n.dat")" = 1252.5 ] &&
		ok "the split panel's tcp mtu=65536 line" || not_ok "--by data: $(cat "$keep/tp.facets")"
	expect_exit 2 "--by a knob that is no column" "$PLOT" --by nosuch --out-dir "$out" "$sweep"
	grep -q 'not a knob (they are: offload tso' "$TL_TMP/err" && ok "says which are" || not_ok "$(cat "$TL_TMP/err")"
	expect_exit 2 "--keep-data into a directory not empty" "$PLOT" --keep-data "$keep" "$sweep"
}

# An older runs.csv: no knob columns but offload; tso, gso, gro read back.
older() {
	local old="$TL_TMP/old" keep="$TL_TMP/keep-old"
	mkdir -p "$old"
	"$STATS" select --columns backend,clients,offload,rep,model,tso_read,gso_read,gro_read,status,mb_per_sec,ops_per_sec,cpu_us_per_mb \
		"$sweep/runs.csv" | sed '1s/_read//g' >"$old/runs.csv"
	expect_exit 0 "tbench-plot of an older runs.csv" "$PLOT" --keep-data "$keep" "$old"
	[ "$(titles "$keep/throughput.gp" | grep -v -e '^single runs$' | paste -sd,)" = "tcp,pipe" ] &&
		ok "older runs.csv: one line per backend" || not_ok "older titles: $(titles "$keep/throughput.gp")"
}

# A sweep that left the offload alone ("-"): the decomposition has one tcp
# level, and says which point of a level it took where mtu and placement vary.
# The stack is the model's (tbench-stats decompose --model): nop, then tcp;
# pipe is a layer beside it, not under tcp.
decomposition() {
	local dec="$TL_TMP/dec" keep="$TL_TMP/keep-dec"
	mkdir -p "$dec"
	awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
		{ $c["cost_cpu_us"] = 2e6 / $c["ops_per_sec"]; $c["wall_us_per_op"] = $c["clients"] * 1e6 / $c["ops_per_sec"]
		  if ($c["offload"] == "on") $c["offload"] = "-"; print }' "$sweep/runs.csv" >"$dec/runs.csv"
	expect_exit 0 "tbench-plot of a sweep with cost figures, offload not varied" "$PLOT" --keep-data "$keep" "$dec"
	[ -s "$dec/decomposition.png" ] && [ "$(cut -f2 "$keep/lcpu.list" | paste -sd,)" = harness,tcp-nop ] &&
		ok "decomposition: nop, then tcp" || not_ok "decomposition layers: $(cat "$keep/lcpu.list" 2>&1)"
	# the knob values it took, named in the title and the note (issue 35 item 4)
	check "and says which points it took" grep -q 'Decomposed at mtu=1500, placement=same: the first value swept' "$keep/decomposition.gp"
	check "in its title too" grep -q "^set multiplot title '.*(decomposed at mtu=1500, placement=same)'" "$keep/decomposition.gp"
	# wall time per client only up to the CPUs (meta.json: 2): clients 1 and 2, x slots 0 and 1
	jq -n '{ host: { name: "h", kernel: "6.18", cores_online: 2 } }' >"$dec/meta.json"
	expect_exit 0 "decomposition of a sweep on 2 CPUs" "$PLOT" --keep-data "$keep-2" "$dec"
	[ "$(cat "$keep-2"/lwall.*.dat | cut -d' ' -f1 | sort -u | paste -sd,)" = 0,1 ] &&
		[ "$(cat "$keep-2"/lcpu.*.dat | cut -d' ' -f1 | sort -u | paste -sd,)" = 0,1,2 ] &&
		ok "wall time up to 2 clients, CPU time at all 3" || not_ok "wall x: $(cat "$keep-2"/lwall.*.dat)"
	check "its title says why" grep -q 'up to 2 clients (the CPUs)' "$keep-2/decomposition.gp"
	jq -n '{ host: { name: "h", kernel: "6.18", cores_online: 1 } }' >"$dec/meta.json"
	"$STATS" select --where clients=4 "$dec/runs.csv" >"$dec/runs4.csv"
	mv "$dec/runs4.csv" "$dec/runs.csv"
	expect_exit 0 "decomposition of 4 clients on 1 CPU" "$PLOT" --keep-data "$keep-1" "$dec"
	check "no wall-time panel, and why" grep -q 'No wall-time panel: every client count swept is above the 1 CPUs' "$keep-1/decomposition.gp"
}

# The layers beside the stack, as the backends' entries declare them
# (tbench-stats decompose --model): tcp-zc, unix, pipe, shm and uring over
# nop, mptcp over tcp; never unix - pipe or tcp - unix, different paths.
# From a sweep where CPU us per operation is BASE + 0.1 rep (the
# differences exact) and wall us per operation twice that per client;
# mptcp's offload n/a (it was no --net-backends there), tcp's on.
siblings() {
	local sib="$TL_TMP/sib" keep="$TL_TMP/keep-sib"
	mkdir -p "$sib"
	"$STATS" row --header | awk -F, 'NR == 1 {
		n = split($0, h, ","); print
		split("nop 0.2 shm 3 pipe 9 unix 15 tcp 18 uring 20 tcp-zc 19 mptcp 22", B, " ")
		for (bi = 1; bi < 16; bi += 2) for (c = 1; c <= 4; c *= 2) for (rep = 1; rep <= 2; rep++) {
			b = B[bi]; cpu = B[bi + 1] + 0.1 * rep
			delete v
			v["backend"] = b; v["clients"] = c; v["rep"] = rep; v["model"] = "processes"; v["status"] = "ok"
			v["offload"] = b ~ /^(tcp|uring|tcp-zc)$/ ? "on" : "n/a"
			v["ops_per_sec"] = 1e6 / cpu; v["mb_per_sec"] = 1000 / cpu; v["cpu_us_per_mb"] = cpu * 10
			v["cost_cpu_us"] = cpu; v["wall_us_per_op"] = 2 * cpu * c
			line = ""
			for (i = 1; i <= n; i++) line = line (i > 1 ? "," : "") (h[i] in v ? v[h[i]] : "")
			print line
		}
	}' | unvaried >"$sib/runs.csv"
	expect_exit 0 "tbench-plot of a sweep with shm, uring, tcp-zc and mptcp" "$PLOT" --keep-data "$keep" "$sib"
	[ -s "$sib/siblings.png" ] && [ -s "$sib/siblings.svg" ] && ok "siblings.png and .svg" || not_ok "no siblings chart"
	[ "$(cut -f2 "$keep/scpu.list" | paste -sd,)" = tcp_zc,mptcp,unix_socket,copy_wakeup,shm,uring ] &&
		ok "siblings: each layer beside the stack" || not_ok "sibling pairs: $(cat "$keep/scpu.list" 2>&1)"
	[ "$(titles "$keep/siblings.gp" | grep -c -e '(tcp-zc − nop)$' -e '(mptcp − tcp, TSO/GSO on)$' -e '(unix − nop)$' \
		-e '(pipe − nop)$' -e '(shm − nop)$' -e '(uring − nop)$')" -eq 6 ] &&
		ok "and titled so" || not_ok "siblings titles: $(titles "$keep/siblings.gp")"
	! titles "$keep/siblings.gp" | grep -q -e '^unix − pipe' -e '^tcp − unix' && ok "no different paths drawn as layers" ||
		not_ok "siblings titles: $(titles "$keep/siblings.gp")"
	grep -q '<text>MPTCP over its TCP subflow (mptcp − tcp, TSO/GSO on)' "$sib/siblings.svg" && ok "the SVG's key says it" ||
		not_ok "no 'mptcp − tcp' in siblings.svg"
	# at 2 clients (x slot 1): the differences of the bases, CPU and wall (x 2 x 2 clients)
	local pair base n got
	while read -r pair base; do
		n="$(awk -F'\t' -v l="$pair" '$2 == l { print $1 }' "$keep/scpu.list")"
		got="$(awk '$1 == 1 { print $4 }' "$keep/scpu.$n.dat" "$keep/swall.$n.dat" | paste -sd' ')"
		awk -v got="$got" -v w="$base" 'BEGIN { split(got, v, " "); e = 1e-6
			exit !(v[1] - w < e && w - v[1] < e && v[2] - 4 * w < e && 4 * w - v[2] < e) }' &&
			ok "$pair at 2 clients: CPU $base, wall 4 x $base" || not_ok "$pair at 2 clients: CPU, wall: $got"
	done <<<"shm 2.8
copy_wakeup 8.8
unix_socket 14.8
uring 19.8
tcp_zc 18.8
mptcp 4"
	# the interval: the two levels ran in the same reps, so it is paired, and
	# their difference is the same in both: 0 wide (Welch's, unpaired, would
	# be t(0.975, 2) x 0.0707 = 0.304, the reps' own spread)
	awk '$1 == 1 { exit !($5 >= 0 && $5 < 1e-9) }' "$keep/scpu.0.dat" && ok "tcp-zc − nop's 95% interval: paired, 0" ||
		not_ok "tcp-zc − nop: $(cat "$keep/scpu.0.dat")"
}

# The breakdown that --trace measured, beside the decomposition: a sweep of
# nop, pipe, unix and tcp (offload on and off) whose runs carry trace
# figures: per operation user 1, read/write 3 (pipe, unix), send/recv 2
# (tcp), softirq 0.5 (tcp, 1.5 with offload off), run queue 1 x clients,
# blocked 4 + rep; wall_us_per_op their sum. Parts 0 everywhere (splice,
# futex, io_uring_enter, other) have no box; the bars go in the stack's
# order (nop, tcp), the others after it; a sweep without trace figures has
# no chart.
traced() {
	local tr="$TL_TMP/tr" keep="$TL_TMP/keep-tr" cols
	mkdir -p "$tr"
	cols="$("$STATS" row --trace-parts | awk -F'\t' '$1 == "clients" { print $2 }' | paste -sd,)"
	"$STATS" row --header | awk -F, -v parts="$cols" 'NR == 1 {
		n = split($0, h, ","); print; split(parts, P, ",")
		split("tcp:off tcp:on unix pipe nop", B, " ")
		for (bi = 1; bi <= 5; bi++) for (c = 1; c <= 2; c *= 2) for (rep = 1; rep <= 2; rep++) {
			split(B[bi], bo, ":"); b = bo[1]
			delete v
			v["backend"] = b; v["clients"] = c; v["rep"] = rep; v["model"] = "processes"; v["status"] = "ok"
			v["offload"] = b == "tcp" ? bo[2] : "n/a"
			for (p in P) v[P[p]] = 0
			v["trace_clients_user_us"] = 1
			v["trace_clients_sys_read_write_us"] = b == "pipe" || b == "unix" ? 3 : 0
			v["trace_clients_sys_send_recv_us"] = b == "tcp" ? 2 : 0
			v["trace_clients_softirq_us"] = b != "tcp" ? 0 : bo[2] == "off" ? 1.5 : 0.5
			v["trace_clients_run_queue_us"] = c
			v["trace_clients_blocked_us"] = 4 + rep
			w = 0; for (p in P) w += v[P[p]]
			v["wall_us_per_op"] = w; v["ops_per_sec"] = c * 1e6 / w; v["mb_per_sec"] = v["ops_per_sec"] / 200
			v["cost_cpu_us"] = w / 2; v["cpu_us_per_mb"] = 1e6 / v["mb_per_sec"]
			line = ""
			for (i = 1; i <= n; i++) line = line (i > 1 ? "," : "") (h[i] in v ? v[h[i]] : "")
			print line
		}
	}' | unvaried >"$tr/runs.csv"
	expect_exit 0 "tbench-plot of a sweep with trace figures" "$PLOT" --keep-data "$keep" "$tr"
	[ -s "$tr/trace.png" ] && [ -s "$tr/trace.svg" ] && ok "trace.png and .svg" || not_ok "no trace chart: $(cat "$TL_TMP/err")"
	[ "$(cut -f2 "$keep/trace.parts" | paste -sd,)" = "user,send/recv family,read/write,softirq,run-queue wait,blocked" ] &&
		ok "its parts: those not 0 anywhere, in the order they stack" || not_ok "trace parts: $(cat "$keep/trace.parts")"
	# at 2 clients (slot 1) the bars from the left: the stack's nop, tcp off, tcp on, then
	# unix and pipe as they came; a bar's top is its sum (run queue 2, blocked 5.5 on
	# average: nop 1 + 2 + 5.5)
	[ "$(awk -F'\t' '$1 > 0.5 && $1 < 1.5' "$keep/trace.bars" | sort -n | cut -f2,4 | paste -sd' ')" = \
		'8.5	"nop" 12	"tcp offload=off" 11	"tcp offload=on" 11.5	"unix" 11.5	"pipe"' ] &&
		ok "at 2 clients: a bar per backend in the stack's order, each the sum of its parts" ||
		not_ok "bars at 2 clients: $(sort -n "$keep/trace.bars")"
	grep -q 'by subtraction: wall time per operation' "$keep/trace.gp" && ok "beside the decomposition in wall time" ||
		not_ok "no decomposition panel in trace.gp"
	grep -q '<text>read/write</text>' "$tr/trace.svg" && ok "the SVG's key names the groups" || not_ok "no read/write in trace.svg"
	[ ! -e "$sweep/trace.png" ] && ok "no trace chart of a sweep without trace figures" || not_ok "trace.png of an untraced sweep"
}

compared() {
	local b="$TL_TMP/b" c="$TL_TMP/c"
	mkdir -p "$b" "$c"
	# B has only the knob columns it varied
	make_runs 1.1 >"$TL_TMP/b.csv"
	"$STATS" select --columns backend,clients,offload,mtu,placement,rep,model,status,mb_per_sec "$TL_TMP/b.csv" >"$b/runs.csv"
	expect_exit 0 "tbench-compare --csv: B's tcp at mtu 65536 split 10% faster" "$COMPARE" --csv "$sweep" "$b"
	head -n 1 "$TL_TMP/out" | grep -q '^backend,clients,model,offload,tso,gso,gro,mtu,cc,nodelay,sndbuf,rcvbuf,family,placement,rate,inject_ns,copy_replies,sysctl,n_a,' &&
		ok "points named by every dimension" || not_ok "compare header: $(head -n 1 "$TL_TMP/out")"
	# columns by their names in the header: compare adds columns at the end
	[ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["mtu"] == 65536 && $c["placement"] == "split" { print $2 ":" $c["change_pct"] }' "$TL_TMP/out" |
		paste -sd' ')" = "1:10 2:10 4:10" ] &&
		ok "+10% at that point only" || not_ok "changes: $(cut -d, -f1-14,22 "$TL_TMP/out")"
	[ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["significant"] != "only in A" && $c["significant"] != "only in B"' "$TL_TMP/out" | grep -c '^[a-z]*,[0-9]')" -eq 24 ] &&
		ok "all 24 points matched (B lacks the knobs it did not vary: '-')" || not_ok "matched: $(cat "$TL_TMP/out")"
	expect_exit 0 "tbench-compare's table" "$COMPARE" "$sweep" "$b"
	grep -Eq '^backend +clients +offload +mtu +placement +A +B +change' "$TL_TMP/out" &&
		ok "table: the dimensions that differ between points, not the others" || not_ok "table: $(cat "$TL_TMP/out")"
	check "table: what every point shares" grep -qx 'every point: model=processes' "$TL_TMP/out"
	grep -Eq '^tcp +4 +on +65536 +split +.*\+10\.00%' "$TL_TMP/out" && ok "table: the faster point" || not_ok "table row"

	make_runs 1 free | unvaried >"$c/runs.csv"
	expect_exit 2 "tbench-compare: no point in common" "$COMPARE" "$sweep" "$c"
	grep -q 'no point of .* is in .*: they differ in placement (A: same, split; B: free)' "$TL_TMP/err" &&
		ok "names the dimension that differs" || not_ok "no match: $(cat "$TL_TMP/err")"
	expect_exit 0 "across it with --keys" "$COMPARE" --csv --keys backend,clients,mtu "$sweep" "$c"
	[ "$(grep -c '^tcp,' "$TL_TMP/out")" -eq 6 ] && ok "--keys: tcp at 3 client counts x 2 MTUs" || not_ok "$(cat "$TL_TMP/out")"
}

# Two sweeps (before and after: tcp at mtu 65536, split, 10% faster) drawn
# together: a panel each, titled from its meta.json; or lines of one panel.
several() {
	local before="$TL_TMP/before" after="$TL_TMP/after" out="$TL_TMP/two" keep="$TL_TMP/keep-two" n
	mkdir -p "$before" "$after"
	cp "$sweep/runs.csv" "$before/"
	make_runs 1.1 | unvaried >"$after/runs.csv"
	jq -n '{ host: { name: "hostA", kernel: "6.18", cores_online: 2 }, start: "2026-12-01T10:00",
		sweep: { time_s: 10, reps: 2, client_model: "processes", mode: "lo" } }' >"$before/meta.json"
	jq '.host.name = "hostB"' "$before/meta.json" >"$after/meta.json"
	expect_exit 2 "several DIRs without --out-dir" "$PLOT" "$before" "$after"
	check "says what to give" grep -q 'several DIRs: give --out-dir D' "$TL_TMP/err"
	expect_exit 0 "tbench-plot of two sweeps" "$PLOT" --out-dir "$out" --keep-data "$keep" "$before" "$after"
	[ -s "$out/throughput.png" ] && [ -s "$out/cost.png" ] && [ -s "$out/cpu.png" ] && [ ! -e "$out/decomposition.png" ] &&
		ok "throughput, cost and CPU; no decomposition of two sweeps" || not_ok "two sweeps: $(ls "$out") $(cat "$TL_TMP/err")"
	n="$(awk -F'\t' '$4 == "tcp mtu=65536 placement=split" { print $1 }' "$keep/cost.list")"
	[ -n "$n" ] && [ -s "$keep/cost.0.$n.dat" ] && [ -s "$keep/cost.1.$n.dat" ] && ok "cost: each sweep above its own nop" ||
		not_ok "cost of two sweeps: $(cat "$keep/cost.list" 2>&1)"
	grep -q "^set title 'before'\\.\"\\\\n\"\\.'hostA, Linux 6.18, 2 CPUs" "$keep/throughput.gp" &&
		grep -q "^set title 'after'\\.\"\\\\n\"\\.'hostB, Linux 6.18" "$keep/throughput.gp" &&
		ok "a panel per sweep, titled from its meta.json" || not_ok "panels: $(grep '^set title' "$keep/throughput.gp")"
	n="$(awk -F'\t' '$4 == "tcp mtu=65536 placement=split" { print $1 }' "$keep/tp.list")"
	[ "$(awk '$1 == 4 { print $2 }' "$keep/tp.0.$n.dat")" = 1252.5 ] &&
		[ "$(awk '$1 == 4 { print $2 }' "$keep/tp.1.$n.dat")" = 1377.75 ] &&
		ok "each panel its own sweep's means" || not_ok "means: $(cat "$keep/tp.0.$n.dat" "$keep/tp.1.$n.dat")"
	expect_exit 0 "two sweeps --by placement" "$PLOT" --by placement --out-dir "$out" --keep-data "$keep-by" "$before" "$after"
	titles "$keep-by/throughput.gp" | grep -qx 'tcp sweep=after mtu=65536' && ok "the sweeps as lines: sweep=NAME" ||
		not_ok "--by placement titles: $(titles "$keep-by/throughput.gp")"
	"$STATS" select --columns backend,clients,offload,rep,model,status,mb_per_sec "$after/runs.csv" >"$TL_TMP/short.csv"
	mv "$TL_TMP/short.csv" "$after/runs.csv"
	expect_exit 1 "two sweeps of other columns" "$PLOT" --out-dir "$out" "$before" "$after"
	check "says which" grep -q "after/runs.csv has other columns than .*before/runs.csv" "$TL_TMP/err"
	make_runs 1.1 | unvaried >"$after/runs.csv"
	expect_exit 0 "tbench-compare A B C --csv" "$COMPARE" --csv "$before" "$after" "$sweep"
	[ "$(head -n 1 "$TL_TMP/out" | cut -d, -f1-3)" = sweep,backend,clients ] &&
		[ "$(awk -F, -v b="$after" '$1 == b && $2 != "geomean"' "$TL_TMP/out" | grep -c .)" -eq 24 ] &&
		[ "$(awk -F, -v b="$sweep" '$1 == b && $2 == "tcp"' "$TL_TMP/out" | grep -c .)" -eq 12 ] &&
		ok "one table, a column naming B" || not_ok "A B C: $(cut -c1-60 "$TL_TMP/out")"
	expect_exit 0 "tbench-compare A B C" "$COMPARE" "$before" "$after" "$sweep"
	[ "$(grep -c '^== .* against .*before$' "$TL_TMP/out")" -eq 2 ] && ok "a block per B" || not_ok "blocks: $(cat "$TL_TMP/out")"
	expect_exit 2 "--verdict of two Bs" "$COMPARE" --verdict 'mb_per_sec<-3%' "$before" "$after" "$sweep"
}

plain
faceted
several
older
decomposition
siblings
traced
compared
tl_done
