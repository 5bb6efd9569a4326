"""Strings from a results directory on their way to gnuplot, HTML or a
file name: passed as text, never as something that could run."""

import html
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def gnuplot_str(text):
    """TEXT as a gnuplot string literal that gnuplot does not expand: a
    single-quoted string (no backquote command substitution, no escapes,
    no macros), its quotes as "'" joined on; a newline becomes gnuplot's "\\n"
    joined on, other control characters a space. Print it with
    'noenhanced' where ^ _ { } @ & must show as they are."""
    parts = []
    for line in str(text).split("\n"):
        # gnuplot 5.4 misreads '' (a quote) at a literal's start or beside
        # another: a run of quotes goes in double quotes instead, alone
        pieces = re.split(r"('+)", _CONTROL.sub(" ", line))
        parts.append(".".join(f'"{p}"' if p.startswith("'") else f"'{p}'" for p in pieces if p) or "''")
    return '."\\n".'.join(parts)


def html_text(text):
    """TEXT escaped for HTML element content and quoted attributes."""
    return html.escape(str(text), quote=True)


def check_label(label, what="--label"):
    """LABEL as one component of a path: no '/', not '.' or '..', no control
    characters. Returns None when fine, else what is wrong."""
    if label in (".", ".."):
        return f"{what} '{label}' is not a name: give a word"
    if "/" in label:
        return f"{what} '{label}' holds '/': it names one directory, give it without"
    if _CONTROL.search(label):
        return f"{what} holds a control character: give printable text"
    return None
