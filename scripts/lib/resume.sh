# shellcheck shell=bash
# --resume --out DIR (sourced by tbench-sweep): the sweep's own options,
# kept in DIR/meta.json as "argv", so that "--resume --out DIR" alone goes
# on with exactly the sweep that was interrupted. An option given beside
# --resume must agree with the stored one, except those a session may set
# anew: where it writes, which programs, how verbose, whether it only plans,
# and how far a --precision sweep may go.

# The options of a session alone, never stored; those of the sweep that a
# session may change (stored, the last value given).
RESUME_SESSION_OPTS=" --resume --retry-failed --out --tbench --tbench-srv --tbench-stats -q --quiet -n --dry-run --plan "
RESUME_CHANGEABLE_OPTS=" --max-reps --budget "

# ARGS split into options, one a line, NUL-separated: each option with the
# words after it that do not start with '-' (its value), "--" with the
# rest (tbench's own arguments); --name=value as one.
resume_groups() { # ARGS...
	local group=() a
	while [ $# -gt 0 ]; do
		a="$1"
		shift
		if [ "$a" = -- ]; then
			[ ${#group[@]} -eq 0 ] || printf '%s\0' "${group[*]@Q}"
			group=(-- "$@")
			printf '%s\0' "${group[*]@Q}"
			return
		fi
		if [[ "$a" == -* ]] && [ ${#group[@]} -gt 0 ]; then
			printf '%s\0' "${group[*]@Q}"
			group=()
		fi
		group+=("$a")
	done
	[ ${#group[@]} -eq 0 ] || printf '%s\0' "${group[*]@Q}"
}

# The option of a group ("'--clients' '1,2'" -> --clients).
resume_opt_of() { # GROUP
	local words
	eval "words=($1)"
	echo "${words[0]%%=*}"
}

# The options as parse_options leaves them, for comparing two command lines:
# every global variable but bash's own and the command line itself.
resume_state() { # ARGS...
	(
		parse_options "$@" >/dev/null 2>&1 || exit 1
		# the globals (upper case; locals of the callers are lower case)
		declare -p | grep -E '^declare -[^ ]* [A-Z][A-Z0-9_]*=' |
			grep -Ev '^declare -[^ ]* (BASH[A-Z_]*|RANDOM|SRANDOM|SECONDS|EPOCH[A-Z]*|LINENO|FUNCNAME|PIPESTATUS|ORIG_ARGS)='
	)
}

# The command line to parse: with --resume and a DIR/meta.json that has
# argv, that argv and then the session's own options of ARGS; else ARGS.
# A given option that changes what the stored ones set is a usage error
# that names it and the stored value. Sets RESUME_ARGS.
RESUME_ARGS=()
# shellcheck disable=SC2034  # RESUME_ARGS: tbench-sweep's main reads it
resume_args() { # ARGS...
	RESUME_ARGS=("$@")
	local out="" a prev="" resume=0 stored=() groups=() g opt base wrong=() mine=()
	for a in "$@"; do
		[ "$a" != -- ] || break
		case "$a" in --resume) resume=1 ;; --out=*) out="${a#--out=}" ;; -h | --help) return 0 ;; esac
		[ "$prev" != --out ] || out="$a"
		prev="$a"
	done
	[ "$resume" -eq 1 ] && [ -n "$out" ] && [ -f "$out/meta.json" ] || return 0
	jq -e '.argv | type == "array"' "$out/meta.json" >/dev/null 2>&1 || return 0
	mapfile -d '' stored < <(jq -j '.argv[] | . + "\u0000"' "$out/meta.json")
	# the session's options go before tbench's own (after "--")
	local i=0
	while [ "$i" -lt ${#stored[@]} ] && [ "${stored[$i]}" != -- ]; do i=$((i + 1)); done
	local head=("${stored[@]:0:i}") tail=("${stored[@]:i}")
	base="$(resume_state "${stored[@]}")" || die "--resume: $out/meta.json's argv is not a command line this version takes: give the sweep's options yourself"
	mapfile -d '' groups < <(resume_groups "$@")
	for g in "${groups[@]}"; do
		opt="$(resume_opt_of "$g")"
		eval "a=($g)"
		# shellcheck disable=SC2154  # a: set by the eval
		if [[ "$RESUME_SESSION_OPTS$RESUME_CHANGEABLE_OPTS" == *" $opt "* ]]; then
			eval "mine+=($g)"
		elif [ "$opt" = -- ]; then
			[ "${a[*]@Q}" = "${tail[*]@Q}" ] || wrong+=("${a[*]} (the sweep's: ${tail[*]:-no tbench arguments})")
		elif [ "$(resume_state "${head[@]}" "${a[@]}" "${tail[@]}" || true)" != "$base" ]; then
			wrong+=("$(eval "printf '%s ' $g")(the sweep's: $(resume_stored "$opt" "${stored[@]}"))")
		fi
	done
	[ ${#wrong[@]} -eq 0 ] || usage_error "--resume: $(printf '%s; ' "${wrong[@]}" | sed 's/; $//') differ from $out/meta.json: give --resume --out $out alone to continue that sweep, or start a new one"
	RESUME_ARGS=("${head[@]}" "${mine[@]}" "${tail[@]}")
	echo "$PROG: --resume: the sweep's options from $out/meta.json: $(shell_words "${stored[@]}")" >&2
}

# How the stored argv gives OPT ("--clients 1,2,8", or "not given").
resume_stored() { # OPT ARGV...
	local opt="$1" g
	shift
	while IFS= read -r -d '' g; do
		[ "$(resume_opt_of "$g")" != "$opt" ] || { eval "printf '%s' \"\$(printf '%s ' $g)\"" | sed 's/ $//'; return; }
	done < <(resume_groups "$@")
	echo "not given"
}

# The sweep's own options of ARGS, for meta.json's argv: all but the
# session's (RESUME_SESSION_OPTS), a changeable one only as last given, as a
# JSON array.
resume_argv_json() { # ARGS...
	local g opt groups=() keep=() i j later
	mapfile -d '' groups < <(resume_groups "$@")
	for ((i = 0; i < ${#groups[@]}; i++)); do
		opt="$(resume_opt_of "${groups[$i]}")"
		[[ "$RESUME_SESSION_OPTS" != *" $opt "* ]] || continue
		later=0
		if [[ "$RESUME_CHANGEABLE_OPTS" == *" $opt "* ]]; then
			for ((j = i + 1; j < ${#groups[@]}; j++)); do
				[ "$(resume_opt_of "${groups[$j]}")" != "$opt" ] || later=1
			done
		fi
		[ "$later" -eq 1 ] || eval "keep+=(${groups[$i]})"
	done
	json_strings "${keep[@]}"
}
