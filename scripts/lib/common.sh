# Shared by tbench-sweep, tbench-plot, tbench-compare and the benchmarks
# under bench/ (sourced, not run):
# messages and exits, and which of the suite's programs to use.
# The caller sets PROG (its name) and SCRIPT_DIR (its directory).
# shellcheck shell=bash

die() {
	echo "$PROG: $*" >&2
	exit 1
}

usage_error() {
	echo "$PROG: $*" >&2
	echo "Try '$PROG --help'." >&2
	exit 2
}

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }

# Shuffles the array named NAME in place with bash's RANDOM (Fisher-Yates).
# In the caller's shell, not in a pipeline or $(...): a subshell reseeds
# RANDOM, and the same seed must give the same order.
shuffle_array() { # NAME
	local -n arr="$1"
	local i j tmp
	for ((i = ${#arr[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		tmp="${arr[i]}"
		arr[i]="${arr[j]}"
		arr[j]="$tmp"
	done
}

# 0 when PROGRAM --version says it is of this suite (dbench's tbench says
# "dbench version 4.00"); its first line on stdout either way.
tb_version_of() { # PROGRAM
	local out
	out="$("$1" --version 2>&1 </dev/null)" || true
	echo "${out%%$'\n'*}"
	[[ "$out" == *"tbench suite"* ]]
}

# --version of a script: the suite's version, as the tbench it would use
# says (the scripts and the programs come and go together), and which.
tb_script_version() { # EXPLICIT-TBENCH
	local tb ver
	if tb="$(tb_find tbench "" "$1" 2>/dev/null)" && ver="$(tb_version_of "$tb")"; then
		echo "$PROG (tbench suite) ${ver#*tbench suite) } (as $tb says)"
	else
		echo "$PROG (tbench suite): no tbench of this suite found to say the version (build it: scripts/quickstart)"
	fi
}

# The directories to look in for a program of the suite, best first: beside
# the script (an install, or a build tree holding the scripts), the top of
# the tree (an in-tree build), build/ (where scripts/quickstart builds), the
# current directory (a build directory), then PATH.
tb_candidates() { # NAME
	local d
	for d in "$SCRIPT_DIR" "$SCRIPT_DIR/.." "$SCRIPT_DIR/../build" "$PWD"; do
		[ ! -f "$d/$1" ] || [ ! -x "$d/$1" ] || echo "$(cd "$d" && pwd)/$1"
	done
	type -P -a "$1" 2>/dev/null || true
}

# The program NAME of this suite, on stdout: EXPLICIT (an option or
# environment variable) if given, else the first of the candidates (after
# PREFER-DIR's, e.g. the directory of the tbench in use) whose --version
# says "tbench suite". Says on stderr which one and what it is. HOW tells
# the user how to name one ("--tbench PATH or TBENCH=PATH").
tb_find() { # NAME HOW EXPLICIT [PREFER-DIR]
	local name="$1" how="$2" explicit="$3" prefer="${4:-}" c real version seen=" "
	if [ -n "$explicit" ]; then
		if [ ! -f "$explicit" ] || [ ! -x "$explicit" ]; then
			echo "$PROG: $explicit: not an executable file (the $name to use, from $how)" >&2
			exit 2
		fi
		c="$(cd "$(dirname "$explicit")" && pwd)/$(basename "$explicit")"
		if ! version="$(tb_version_of "$c")"; then
			echo "$PROG: $explicit is not the $name of this suite: its --version says '$version'" >&2
			exit 2
		fi
		echo "$PROG: using $c ($version)" >&2
		echo "$c"
		return
	fi
	while IFS= read -r c; do
		real="$(readlink -f -- "$c" || echo "$c")"  # /bin/x and /usr/bin/x: one file, looked at once
		if [ -z "$c" ] || [[ "$seen" == *" $real "* ]]; then continue; fi
		seen+="$real "
		if version="$(tb_version_of "$c")"; then
			echo "$PROG: using $c ($version)" >&2
			echo "$c"
			return
		fi
		echo "$PROG: not using $c: its --version says '$version', not 'tbench suite'" >&2
	done < <([ -z "$prefer" ] || [ ! -x "$prefer/$name" ] || echo "$prefer/$name"; tb_candidates "$name")
	die "no $name of this suite beside $SCRIPT_DIR, in build/, here or in PATH:" \
		"build it (scripts/quickstart builds in build/) or name it ($how)"
}

# ---- the backends, as tbench -b list says (man tbench, BACKENDS) -------------------

# "NAME CAP,CAP,..." a line ("NAME -" with none), from tb_read_backends: the
# one place the scripts learn which backends there are and what each takes,
# so that no script keeps a list of its own that could drift from tbench.
TB_BACKENDS=""

tb_read_backends() { # TBENCH
	TB_BACKENDS="$("$1" -b list 2>/dev/null)" || TB_BACKENDS=""
	[ -n "$TB_BACKENDS" ] || die "'$1 -b list' lists no backends: use a tbench of this suite"
}

# The backends that have every CAP (all of them without one), in tbench's
# order, commas between.
backends_with() { # [CAP...]
	awk -v want="$*" 'BEGIN { n = split(want, w, " ") }
		NF {
			split("", has); m = split($2, c, ",")
			for (i = 1; i <= m; i++) has[c[i]] = 1
			ok = 1
			for (i = 1; i <= n; i++) if (!(w[i] in has)) ok = 0
			if (ok) { printf "%s%s", sep, $1; sep = "," }
		}
		END { print "" }' <<<"$TB_BACKENDS"
}

# Status 0 when BACKEND has CAP.
backend_has() { # BACKEND CAP
	[[ ",$(backends_with "$2")," == *",$1,"* ]]
}

# For help texts, before any tbench is chosen: the backends with every CAP
# of the tbench EXPLICIT (or found) would be, else where to read them.
tb_help_backends() { # EXPLICIT CAP...
	local tb explicit="$1"
	shift
	if [ -z "$TB_BACKENDS" ] && tb="$(tb_find tbench "" "$explicit" 2>/dev/null)"; then
		TB_BACKENDS="$("$tb" -b list 2>/dev/null)" || TB_BACKENDS=""
	fi
	if [ -n "$TB_BACKENDS" ]; then
		backends_with "$@"
	else
		echo "those with $* in 'tbench -b list'"
	fi
}

# The arguments as a JSON array of strings, whatever they hold (jq 1.6's
# --args takes an argument that starts with - for an option of its own).
json_strings() {
	local a
	for a in "$@"; do jq -n --arg a "$a" '$a'; done | jq -s -c .
}
