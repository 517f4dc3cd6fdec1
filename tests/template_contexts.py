"""Where each `{{ ... }}` of a template lands, read from the template's own text, and which filter it ends with.

A shell template (`*.sh.j2`, `*.sbatch.j2`) is lexed the way bash reads it, with each expression replaced by a
placeholder word, so each expression gets one of these contexts:

- `word`: an unquoted word (or part of one) in code, a command substitution `$(...)` or backticks: the place a
  shell-quoted value (`'...'` or `$'...'`) stays one literal word;
- `comment`: after `#` at the start of a word, to the end of the line: inert while the value holds no line break;
- `sbatch`: an `#SBATCH` directive line, which sbatch parses itself, not bash;
- `arith`: inside `$(( ... ))`, where bash expands the text as if double-quoted and then evaluates it (an array
  subscript in it runs a command substitution): only an integer may go there;
- `double`, `single`, `param`, `heredoc`: inside double quotes, single quotes, a `${...}` expansion or a here-document
  body, where a shell-quoted word is not read as one word (its quotes are literal, or expansions still run): never
  allowed.

The rule tests/test_templating.py enforces: in `word` and `comment` the expression's last filter is `sh`, in `sbatch`
it is `slurm`, in `arith` it is `int`, and no expression sits in any other context. A YAML template's expressions are
read by `yaml_contexts` (a whole plain scalar, part of one, a comment, a block scalar's line, a quoted scalar) and
held to their own filters there. A Python template's (`*.py.j2`) are read by `python_contexts`: `constant` when the
expression is the whole right-hand side of a top-level `NAME = ...` line, else `other`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from jinja2 import Environment

KEYWORDS = {"if", "else", "and", "or", "not", "in", "is"}
MARK = "\x00"


@dataclass(frozen=True)
class Expression:
    line: int
    source: str
    last_filter: str | None
    """The filter applied last to the whole expression; None when there is none, or when an operator at the top
    level (`~`, `+`, `if ... else`) puts text beside it after filtering."""
    context: str = "word"


def _last_filter(tokens: list[tuple[str, str]]) -> str | None:
    """The name of the filter applied last to the whole expression, or None (see Expression.last_filter)."""
    depth, segments = 0, [[]]  # the expression split at its top-level pipes
    for kind, value in tokens:
        if kind == "operator" and value in "([{":
            depth += 1
        elif kind == "operator" and value in ")]}":
            depth -= 1
        elif depth == 0:
            if kind == "operator" and value == "|":
                segments.append([])
                continue
            if (kind == "operator" and value != ".") or (kind == "name" and value in KEYWORDS):
                return None  # `~`, `+`, `if ... else`: something beside the filtered value
        segments[-1].append((kind, value))
    last = segments[-1]
    if len(segments) < 2 or not last or last[0][0] != "name":
        return None
    rest = last[1:]
    if rest and not (rest[0][1] == "(" and rest[-1][1] == ")"):
        return None
    return last[0][1]


def expressions(env: Environment, source: str) -> tuple[str, list[Expression]]:
    """The template as data with each `{{ ... }}` replaced by a placeholder `\\0<n>\\0`, and the expressions."""
    skeleton: list[str] = []
    found: list[Expression] = []
    current: list[tuple[str, str]] | None = None
    start = 0
    for line, kind, value in env.lex(source):
        if kind == "variable_begin":
            current, start = [], line
        elif kind == "variable_end" and current is not None:
            text = "".join(v for _, v in current).strip()
            tokens = [(k, v) for k, v in current if k != "whitespace"]
            last = _last_filter(tokens)
            skeleton.append(f"{MARK}{len(found)}{MARK}")
            found.append(Expression(start, text, last))
            current = None
        elif current is not None:
            current.append((kind, value))
        elif kind == "data":
            skeleton.append(value)
    return "".join(skeleton), found


def shell_contexts(skeleton: str) -> dict[int, str]:
    """The context of each placeholder in a shell script's skeleton (see the module docstring)."""
    out: dict[int, str] = {}
    stack: list[list[str | int]] = [["code", 0]]  # [kind, paren depth] for code, subst, bq, dq, param
    i, n, word_start = 0, len(skeleton), True
    pending: list[tuple[str, bool]] = []  # here-documents whose bodies start at the next line
    while i < n:
        c = skeleton[i]
        kind = stack[-1][0]
        if c == MARK:
            end = skeleton.index(MARK, i + 1)
            number = int(skeleton[i + 1 : end])
            out[number] = {"code": "word", "subst": "word", "bq": "word", "dq": "double", "param": "param"}.get(
                str(kind), str(kind)
            )
            i, word_start = end + 1, False
            continue
        if kind in ("code", "subst", "bq"):
            if c == "#" and word_start:
                end = skeleton.find("\n", i)
                end = n if end < 0 else end
                comment = skeleton[i:end]
                context = "sbatch" if comment.startswith("#SBATCH") and kind == "code" else "comment"
                for part in comment.split(MARK)[1::2]:
                    out[int(part)] = context
                i = end
                continue
            if c == "\\":
                i += 2
                word_start = False
                continue
            if c == "'":
                end = skeleton.find("'", i + 1)
                end = n if end < 0 else end
                for part in skeleton[i:end].split(MARK)[1::2]:
                    out[int(part)] = "single"
                i, word_start = end + 1, False
                continue
            if c == "$" and skeleton.startswith("$'", i):
                end = i + 2
                while end < n and skeleton[end] != "'":
                    end += 2 if skeleton[end] == "\\" else 1
                for part in skeleton[i:end].split(MARK)[1::2]:
                    out[int(part)] = "single"
                i, word_start = end + 1, False
                continue
            if c == '"':
                stack.append(["dq", 0])
                i, word_start = i + 1, False
                continue
            if skeleton.startswith("<<<", i):  # a here-string: a word follows, read as usual
                i, word_start = i + 3, True
                continue
            if skeleton.startswith("<<", i):
                i = _heredoc(skeleton, i, pending)
                continue
            if c == "\n" and pending:
                i = _heredoc_bodies(skeleton, i + 1, pending, out)
                word_start = True
                continue
            if c == "`":
                if kind == "bq":
                    stack.pop()
                else:
                    stack.append(["bq", 0])
                i += 1
                continue
            if kind == "subst" and c == "(":
                stack[-1][1] = int(stack[-1][1]) + 1
            elif kind == "subst" and c == ")":
                if int(stack[-1][1]) == 0:
                    stack.pop()
                    i, word_start = i + 1, False
                    continue
                stack[-1][1] = int(stack[-1][1]) - 1
        if kind == "dq":
            if c == "\\":
                i += 2
                continue
            if c == '"':
                stack.pop()
                i += 1
                continue
            if c == "`":
                stack.append(["bq", 0])
                i += 1
                continue
        if kind == "arith":
            if skeleton.startswith("$(", i) and not skeleton.startswith("$((", i):
                stack.append(["subst", 0])
                i += 2
            elif c == "(":
                stack[-1][1] = int(stack[-1][1]) + 1
                i += 1
            elif c == ")" and int(stack[-1][1]) == 0 and skeleton.startswith("))", i):
                stack.pop()
                i, word_start = i + 2, False
            else:
                if c == ")":
                    stack[-1][1] = int(stack[-1][1]) - 1
                i += 1
            continue
        if kind == "param":
            if c == "{":
                stack[-1][1] = int(stack[-1][1]) + 1
            elif c == "}":
                if int(stack[-1][1]) == 0:
                    stack.pop()
                else:
                    stack[-1][1] = int(stack[-1][1]) - 1
            i += 1
            continue
        if skeleton.startswith("$((", i):
            stack.append(["arith", 0])
            i, word_start = i + 3, False
            continue
        if kind != "param" and skeleton.startswith("$(", i):
            stack.append(["subst", 0])
            i, word_start = i + 2, True
            continue
        if kind != "param" and skeleton.startswith("${", i):
            stack.append(["param", 0])
            i, word_start = i + 2, False
            continue
        word_start = c in " \t\n;|&()"
        i += 1
    return out


def _heredoc(text: str, i: int, pending: list[tuple[str, bool]]) -> int:
    """Reads `<<[-]['"]WORD['"]`, queues its body; returns the index after it."""
    j = i + 2
    strip = j < len(text) and text[j] == "-"
    j += 1 if strip else 0
    while j < len(text) and text[j] in " \t":
        j += 1
    quote = text[j] if j < len(text) and text[j] in "'\"" else ""
    j += 1 if quote else 0
    k = j
    while k < len(text) and (text[k].isalnum() or text[k] in "_-"):
        k += 1
    pending.append((text[j:k], strip))
    return k + (1 if quote else 0)


def _heredoc_bodies(text: str, i: int, pending: list[tuple[str, bool]], out: dict[int, str]) -> int:
    """Skips the bodies of the queued here-documents from line start `i`; placeholders in them are `heredoc`."""
    while pending:
        word, strip = pending.pop(0)
        while i < len(text):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            line = text[i:end]
            i = end + 1
            if (line.lstrip("\t") if strip else line) == word:
                break
            for part in line.split(MARK)[1::2]:
                out[int(part)] = "heredoc"
    return i


def shell_expressions(env: Environment, source: str) -> list[Expression]:
    skeleton, found = expressions(env, source)
    contexts = shell_contexts(skeleton)
    return [Expression(e.line, e.source, e.last_filter, contexts.get(n, "unseen")) for n, e in enumerate(found)]


def yaml_contexts(skeleton: str) -> dict[int, str]:
    """The context of each placeholder in a YAML template's skeleton: `plain` (a whole scalar, key or flow item),
    `partial` (part of a plain scalar, beside other text), `comment`, `block` (a line of a `|` or `>` block
    scalar), `double` or `single` (inside a quoted scalar)."""
    out: dict[int, str] = {}
    block_indent: int | None = None
    for line in skeleton.split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None and (not line.strip() or indent > block_indent):
            for part in line.split(MARK)[1::2]:
                out[int(part)] = "block"
            continue
        block_indent = None
        quote, i = "", 0
        while i < len(line):
            c = line[i]
            if c == MARK:
                end = line.index(MARK, i + 1)
                context = {"": "plain", '"': "double", "'": "single"}[quote]
                if context == "plain" and not _whole_scalar(line[:i], line[end + 1 :]):
                    context = "partial"
                out[int(line[i + 1 : end])] = context
                i = end + 1
                continue
            if quote == '"' and c == "\\":
                i += 2
                continue
            if c in "\"'" and (quote == c or (not quote and (i == 0 or line[i - 1] in " [{,:"))):
                quote = "" if quote else c
            elif not quote and c == "#" and (i == 0 or line[i - 1] in " \t"):
                for part in line[i:].split(MARK)[1::2]:
                    out[int(part)] = "comment"
                break
            i += 1
        if re.search(r"(^|[:\-]\s)[|>][-+0-9]*\s*$", line.split(" #")[0].rstrip()):
            block_indent = indent
    return out


def _whole_scalar(before: str, after: str) -> bool:
    """True when a placeholder is a whole scalar: nothing of the same scalar before or after it (a `yaml`-filtered
    value quoted beside other text would leave its quotes inside the scalar)."""
    starts = before.strip() == "" or before.endswith((": ", "- ", "[", "{", ", ", "[ ", "{ "))
    rest = after.lstrip(" ")
    ends = rest == "" or rest.startswith((",", "]", "}")) or after.startswith(": ") or after == ":"
    ends = ends or (rest != after and rest.startswith("#"))
    return starts and ends


def yaml_expressions(env: Environment, source: str) -> list[Expression]:
    skeleton, found = expressions(env, source)
    contexts = yaml_contexts(skeleton)
    return [Expression(e.line, e.source, e.last_filter, contexts.get(n, "unseen")) for n, e in enumerate(found)]


PYTHON_CONSTANT = re.compile(rf"[A-Z][A-Z0-9_]* = {MARK}(\d+){MARK}")


def python_contexts(skeleton: str) -> dict[int, str]:
    """`constant` for a placeholder that is a whole top-level assignment's value, `other` anywhere else (inside a
    string, a docstring, an expression)."""
    out: dict[int, str] = {}
    for line in skeleton.splitlines():
        whole = PYTHON_CONSTANT.fullmatch(line)
        for n in re.findall(rf"{MARK}(\d+){MARK}", line):
            out[int(n)] = "constant" if whole else "other"
    return out


def python_expressions(env: Environment, source: str) -> list[Expression]:
    skeleton, found = expressions(env, source)
    contexts = python_contexts(skeleton)
    return [Expression(e.line, e.source, e.last_filter, contexts.get(n, "unseen")) for n, e in enumerate(found)]


__all__ = [
    "Expression",
    "expressions",
    "python_contexts",
    "python_expressions",
    "shell_contexts",
    "shell_expressions",
    "yaml_contexts",
    "yaml_expressions",
]
