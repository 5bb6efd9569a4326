"""--resume --out DIR: the sweep's own options, kept in DIR/meta.json as
"argv", so that "--resume --out DIR" alone goes on with exactly the sweep
that was interrupted. An option given beside --resume must agree with the
stored one, except those a session sets anew: where it writes, which
programs, how verbose, whether it only plans, and how far a --precision
sweep may go.

The arity of each option and the meaning of each spelling are the
parser's: the command lines are split into options with its table of
actions and compared as the values it parses, never as text."""

import os

from . import store
from .errors import UsageError

# Options of a session alone, never stored (nor taken from meta.json: the
# programs come from the command line); options of the sweep a session
# may change (stored, the last value given).
SESSION_DESTS = {"resume", "retry_failed", "out", "tbench", "tbench_srv", "tbench_stats",
                 "quiet", "dry_run", "help", "version"}
CHANGEABLE_DESTS = {"max_reps", "budget"}


def split(parser, argv):
    """ARGV as ([option groups], tbench's own arguments after "--"). A group
    is an option with its value when it takes one (the next word, whatever
    it starts with); --name=value is one word."""
    groups, i = [], 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return groups, list(argv[i + 1:])
        action = parser._option_string_actions.get(word)
        if action is not None and action.nargs != 0 and i + 1 < len(argv):
            groups.append([word, argv[i + 1]])
            i += 2
        else:
            groups.append([word])
            i += 1
    return groups, []


def action_of(parser, group):
    """The parser's action of a group (None for a word it does not know)."""
    return parser._option_string_actions.get(group[0].split("=", 1)[0] if group[0].startswith("--") else group[0])


def for_parser(parser, groups):
    """Groups as words argparse reads unambiguously: an option and its
    value as --long=value (a value may start with '-')."""
    words = []
    for g in groups:
        action = action_of(parser, g)
        if len(g) == 2 and action is not None:
            long = [o for o in action.option_strings if o.startswith("--")][-1]
            words.append(f"{long}={g[1]}")
        else:
            words += g
    return words


def parse(parser, argv):
    """ARGV parsed by PARSER, option values starting with '-' included;
    tbench's own arguments (after "--") as its attribute extra."""
    return parse_groups(parser, *split(parser, argv))


def parse_groups(parser, groups, tail):
    opts = parser.parse_args(for_parser(parser, groups))
    opts.extra = list(tail)
    return opts


def config(opts):
    """The sweep a parsed command line asks for, to compare two: every
    option but a session's, --vary as {knob: values} (in any spelling)."""
    conf = {k: v for k, v in vars(opts).items() if k not in SESSION_DESTS | CHANGEABLE_DESTS}
    conf["vary"] = {text.split("=", 1)[0]: text.split("=", 1)[-1] for _, text in opts.vary}
    return conf


def dest_of(parser, group):
    """What a group sets: its option's dest, and for --vary the knob."""
    action = action_of(parser, group)
    if action is None:
        return (group[0],)
    if action.dest == "vary":
        value = group[1] if len(group) == 2 else group[0].split("=", 1)[-1]
        knob = value.split("=", 1)[0]
        if action.option_strings[0] != "--vary":   # --mtu, --offload, ...
            knob = action.option_strings[0][2:]
        return ("vary", knob)
    return (action.dest,)


def stored_argv(meta_path):
    """meta.json's argv, checked: UsageError naming the file and field."""
    meta = store.read_meta(meta_path)
    return store.meta_field(meta, meta_path, "argv", "strings")


def merge(parser, typed, out):
    """The command line of a --resume session: DIR/meta.json's argv, then
    the session's own options of TYPED. An option of TYPED that would
    change what the stored ones set is a UsageError naming it and the
    stored value. Returns (argv, the stored argv or None)."""
    meta_path = os.path.join(out, "meta.json")
    if not os.path.isfile(meta_path):
        return typed, None
    stored = stored_argv(meta_path)
    s_groups, s_tail = split(parser, stored)
    for g in s_groups:
        action = action_of(parser, g)
        if action is not None and action.dest in SESSION_DESTS:
            raise UsageError(f"{meta_path}: field 'argv' holds {g[0]}, an option of a session that "
                             "meta.json never keeps (the programs, --out, ... come from the command line): "
                             "remove it, or start a new sweep")
    try:
        base = config(parse(parser, stored))
    except UsageError as e:
        raise UsageError(f"{meta_path}: field 'argv' is not a command line this version takes ({e}): "
                         "continue it with the version that made it, or start a new sweep") from None
    t_groups, t_tail = split(parser, typed)
    mine, wrong = [], []
    for g in t_groups:
        action = action_of(parser, g)
        if action is not None and action.dest in SESSION_DESTS | CHANGEABLE_DESTS:
            mine.append(g)
        elif g in s_groups:
            continue   # the sweep's own option, as it was given
        elif config(parse_groups(parser, s_groups + [g], s_tail)) != base:
            wrong.append(f"{' '.join(g)} (the sweep's: {spelled(parser, s_groups, dest_of(parser, g))})")
    if typed_tail_given(typed) and t_tail != s_tail:
        wrong.append(f"-- {' '.join(t_tail)} (the sweep's: {' '.join(s_tail) or 'no tbench arguments'})")
    if wrong:
        raise UsageError(f"--resume: {'; '.join(wrong)}: not the sweep's own options, which {meta_path} keeps. "
                         f"To continue it, give --resume --out {out} with none of them, or each as it was "
                         "(--max-reps and --budget may change); or start a new sweep")
    merged = [w for g in s_groups + mine for w in g] + (["--"] + s_tail if s_tail else [])
    return merged, stored


def typed_tail_given(argv):
    return "--" in argv


def spelled(parser, groups, dest):
    """How GROUPS give DEST ("--clients 1,2,8"), or "not given"."""
    for g in groups:
        if dest_of(parser, g) == dest:
            return " ".join(g)
    return "not given"


def argv_to_keep(parser, argv):
    """The sweep's own options of ARGV, for meta.json's argv: all but a
    session's, a changeable one only as last given."""
    groups, tail = split(parser, argv)
    keep = []
    for i, g in enumerate(groups):
        action = action_of(parser, g)
        dest = action.dest if action is not None else None
        if dest in SESSION_DESTS:
            continue
        if dest in CHANGEABLE_DESTS and any(action_of(parser, h) is action for h in groups[i + 1:]):
            continue
        keep += g
    return keep + (["--"] + tail if tail else [])
