"""The two ways a program of the sweep layer fails, and how it ends."""

import argparse
import difflib
import re
import sys


class UsageError(Exception):
    """Bad usage or bad input (a flag, a file, a field): exit 2."""


class RunError(Exception):
    """The work itself failed (a run, a write, a program): exit 1."""


def run_main(prog, main, argv):
    """Calls main(argv) and turns its errors into a message and an exit
    status: 0 ok, 1 the work failed, 2 bad usage or input, 130 on Ctrl-C."""
    try:
        return main(argv) or 0
    except UsageError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        print(f"Try '{prog} --help'.", file=sys.stderr)
        return 2
    except RunError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # A reader (head, less) that stopped early is not a failure of ours.
        sys.stderr.close()
        return 0


class Parser(argparse.ArgumentParser):
    """argparse as the suite's programs speak: no abbreviated options, and a
    usage error is "PROG: what is wrong" (with "did you mean" for a
    mistyped option) raised as UsageError, so that it exits 2."""

    def __init__(self, **kw):
        kw.setdefault("allow_abbrev", False)
        kw.setdefault("add_help", False)
        kw.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(**kw)

    def error(self, message):
        needs = re.match(r"argument (\S+?)(/\S+)?: expected one argument", message)
        if needs:
            raise UsageError(f"{needs.group(1)} needs a value")
        unknown = re.match(r"unrecognized arguments: (\S+)", message)
        if unknown:
            word = unknown.group(1).split("=", 1)[0]
            message = f"unknown option '{unknown.group(1)}'"
            near = difflib.get_close_matches(word, list(self._option_string_actions), n=1)
            if near:
                message += f": did you mean '{near[0]}'?"
        raise UsageError(message)
